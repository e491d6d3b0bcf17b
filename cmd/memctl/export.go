package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/memcluster/memcluster/internal/buildinfo"
	"github.com/memcluster/memcluster/transfer"
)

type exportOptions struct {
	user, agent, out string
	allUsers         bool
}

func newExportCmd(g *globals) *cobra.Command {
	o := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export (--user U | --all-users) [--agent A] [--out F]",
		Short: "Export a user's memory as JSON Lines: memories, facts with history, patterns, sessions, signals, cold items",
		Long: `Write one user's memory (or every user's, with an admin token) as JSON Lines: a header (format
version, build, time, source cluster), then one object per line with a "kind": memory (with the
fingerprint of its embedding model, never the vector), fact, history, pattern, session, signal and
cold (a cold segment, its memories decoded). With --agent only that agent's memories are written.
Progress goes to stderr; the summary to stdout, or to stderr when the export itself goes to stdout.
memctl import reads the file back.`,
		Example: `  memctl export --user alice --out alice.jsonl
  memctl export --all-users --token $ADMIN_TOKEN > everyone.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd, g)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.user, "user", "", "the user to export")
	f.BoolVar(&o.allUsers, "all-users", false, "export every user (an admin token)")
	f.StringVar(&o.agent, "agent", "", "only this agent's memories")
	f.StringVar(&o.out, "out", "", "write to this file instead of stdout")
	return cmd
}

func (o *exportOptions) run(cmd *cobra.Command, g *globals) (err error) {
	if (o.user == "") == !o.allUsers {
		return errors.New("give --user U or --all-users")
	}
	c, err := g.client()
	if err != nil {
		return err
	}
	var w io.Writer = cmd.OutOrStdout()
	summaryTo := cmd.OutOrStdout()
	if o.out != "" {
		f, err := os.Create(o.out)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		defer func() {
			if cerr := f.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("export: %w", cerr)
			}
		}()
		w = f
	} else {
		summaryTo = cmd.ErrOrStderr()
	}
	report, done := g.progress(cmd.ErrOrStderr(), "export", -1)
	opts := transfer.ExportOptions{AllUsers: o.allUsers, AgentID: o.agent, Build: buildinfo.Get().Version,
		Addr: c.Addr(), Progress: report}
	if o.user != "" {
		opts.Users = []string{o.user}
	}
	sum, err := transfer.Export(cmd.Context(), c, w, opts)
	done()
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return g.printSummary(summaryTo, sum)
}
