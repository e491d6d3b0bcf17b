package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memcluster/memcluster/client"
)

// Defaults of the global flags.
const (
	defaultAddr    = "http://127.0.0.1:7480"
	defaultOutput  = "table"
	defaultTimeout = client.DefaultTimeout
)

// globals holds what every command shares; it is built per root command so
// tests can run many in one process.
type globals struct {
	addr    string
	output  string
	timeout time.Duration
	token   string
	cacert  string
	cert    string
	key     string
	env     func(string) string
}

// json reports whether -o json was asked for.
func (g *globals) json() bool { return g.output == "json" }

// client returns a client for --addr with --timeout.
func (g *globals) client() (*client.Client, error) {
	opts := []client.Option{client.WithTimeout(g.timeout)}
	if g.token != "" {
		opts = append(opts, client.WithBearerToken(g.token))
	}
	hc, err := g.httpClient()
	if err != nil {
		return nil, err
	}
	if hc != nil {
		opts = append(opts, client.WithHTTPClient(hc))
	}
	return client.New(g.addr, opts...)
}

// newRootCmd builds the whole command tree. env is os.Getenv in main and a map
// lookup in tests.
func newRootCmd(stdin io.Reader, stdout, stderr io.Writer, env func(string) string) *cobra.Command {
	if env == nil {
		env = func(string) string { return "" }
	}
	g := &globals{env: env}
	root := &cobra.Command{
		Use:   "memctl",
		Short: "Command-line client of memcluster, the replicated memory store for LLM agents",
		Long: `memctl talks to one memcluster node over its /v1 HTTP API; any node answers any request.

Global flags may also be set through MEMCTL_ADDR, MEMCTL_OUTPUT and MEMCTL_TIMEOUT;
a flag on the command line wins over the environment.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return g.resolve(cmd.Flags())
		},
	}
	root.CompletionOptions.HiddenDefaultCmd = true
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)

	pf := root.PersistentFlags()
	pf.StringVar(&g.addr, "addr", defaultAddr, "node address (env MEMCTL_ADDR)")
	pf.StringVarP(&g.output, "output", "o", defaultOutput, "output format: table or json (env MEMCTL_OUTPUT)")
	pf.DurationVar(&g.timeout, "timeout", defaultTimeout, "per-request timeout, 0 for none (env MEMCTL_TIMEOUT)")
	pf.StringVar(&g.token, "token", "", "API bearer token (env MEMCTL_TOKEN)")
	pf.StringVar(&g.cacert, "cacert", "", "PEM CA that signed the server's certificate, for https addresses (env MEMCTL_CACERT)")
	pf.StringVar(&g.cert, "cert", "", "PEM client certificate, when the server asks for one (env MEMCTL_CERT)")
	pf.StringVar(&g.key, "key", "", "PEM key of --cert (env MEMCTL_KEY)")

	root.AddCommand(
		newPutCmd(g),
		newGetCmd(g),
		newDeleteCmd(g),
		newUpdateCmd(g),
		newMCPCmd(g),
		newForgetCmd(g),
		newSearchCmd(g),
		newClusterCmd(g),
		newNodeCmd(g),
		newShardCmd(g),
		newBackupCmd(g),
		newHealthCmd(g),
		newVersionCmd(g),
		newBenchCmd(g),
		newEvalCmd(g),
		// The memory model: sessions, facts, history, signals, patterns, graph.
		newSessionCmd(g),
		newRememberCmd(g),
		newContextCmd(g),
		newTierCmd(g),
		newFactsCmd(g),
		newHistoryCmd(g),
		newPerceiveCmd(g),
		newSignalsCmd(g),
		newConsolidateCmd(g),
		newPatternsCmd(g),
		newGraphCmd(g),
		// Listing, export and import of a user's memory.
		newListCmd(g),
		newExportCmd(g),
		newImportCmd(g),
		newWorkspaceCmd(g),
	)
	return root
}

// resolve applies the environment to flags not set on the command line, then
// checks the global values.
func (g *globals) resolve(fs *pflag.FlagSet) error {
	// Precedence is flag > env > default; a slice keeps error order stable.
	envFlags := []struct{ flag, env string }{
		{"addr", "MEMCTL_ADDR"},
		{"output", "MEMCTL_OUTPUT"},
		{"timeout", "MEMCTL_TIMEOUT"},
		{"token", "MEMCTL_TOKEN"},
		{"cacert", "MEMCTL_CACERT"},
		{"cert", "MEMCTL_CERT"},
		{"key", "MEMCTL_KEY"},
	}
	for _, ef := range envFlags {
		f := fs.Lookup(ef.flag)
		v := g.env(ef.env)
		if f == nil || f.Changed || v == "" {
			continue
		}
		if err := f.Value.Set(v); err != nil {
			return fmt.Errorf("%s: %w", ef.env, err)
		}
	}
	if g.output != "table" && g.output != "json" {
		return fmt.Errorf("unknown output format %q (want table or json)", g.output)
	}
	if g.timeout < 0 {
		return fmt.Errorf("--timeout %s is negative", g.timeout)
	}
	if g.addr == "" {
		return fmt.Errorf("--addr is empty")
	}
	return nil
}
