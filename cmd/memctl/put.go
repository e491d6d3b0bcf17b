package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
)

type putOptions struct {
	user, agent, run, typ, time string
	tags, entities, meta        []string
	importance                  float64
}

func newPutCmd(g *globals) *cobra.Command {
	o := &putOptions{}
	cmd := &cobra.Command{
		Use:   "put --user U [flags] TEXT... | -",
		Short: "Store a memory and print its id",
		Long: `Store a memory and print its id.

TEXT is the remaining arguments joined by spaces, or "-" to read it from stdin
(a trailing newline is dropped).`,
		Example: `  memctl put --user alice --type semantic --tag prefs "Alice prefers tea"
  git log -1 --format=%B | memctl put --user alice --run r42 -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := o.request(cmd.Flags(), args, cmd.InOrStdin())
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			m, err := c.Put(cmd.Context(), req)
			if err != nil {
				return fmt.Errorf("put: %w", err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), map[string]string{"id": m.ID})
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), m.ID)
			return err
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

func (o *putOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.user, "user", "", "user id (required)")
	f.StringVar(&o.agent, "agent", "", "agent id")
	f.StringVar(&o.run, "run", "", "run id")
	f.StringVar(&o.typ, "type", "", "working, episodic, semantic or perceptual (server default: episodic)")
	f.StringVar(&o.time, "time", "", "when it happened, RFC 3339 (default: when the node receives it)")
	// StringArray, not StringSlice: a tag may contain a comma.
	f.StringArrayVar(&o.tags, "tag", nil, "tag; repeat for more")
	f.StringArrayVar(&o.entities, "entity", nil, "entity the memory is about; repeat for more")
	f.Float64Var(&o.importance, "importance", 0, "importance 0..1 (server default: 0.5)")
	f.StringArrayVar(&o.meta, "meta", nil, "metadata key=value; repeat for more")
}

// request checks what can be checked locally and builds the PutRequest;
// limits the server may configure (sizes) are left to the server.
func (o *putOptions) request(fs *pflag.FlagSet, args []string, in io.Reader) (apiv1.PutRequest, error) {
	if err := requireUser(o.user); err != nil {
		return apiv1.PutRequest{}, err
	}
	text, err := textArg(args, in, "TEXT")
	if err != nil {
		return apiv1.PutRequest{}, err
	}
	req := apiv1.PutRequest{
		UserID: o.user, AgentID: o.agent, RunID: o.run, Type: o.typ, Text: text,
		Tags: o.tags, Entities: o.entities,
	}
	if o.typ != "" {
		if _, err := memory.ParseType(o.typ); err != nil {
			return apiv1.PutRequest{}, fmt.Errorf("--type: %w", err)
		}
	}
	if o.time != "" {
		t, err := parseTime("time", o.time)
		if err != nil {
			return apiv1.PutRequest{}, err
		}
		req.OccurredAt = &t
	}
	// Sent only when given, so the server's default applies otherwise.
	if fs.Changed("importance") {
		if o.importance < 0 || o.importance > 1 {
			return apiv1.PutRequest{}, fmt.Errorf("--importance %g: must be between 0 and 1", o.importance)
		}
		imp := o.importance
		req.Importance = &imp
	}
	if req.Metadata, err = parseMeta(o.meta); err != nil {
		return apiv1.PutRequest{}, err
	}
	return req, nil
}

// parseMeta turns repeated k=v into a map; a repeated key is an error rather
// than a silent overwrite.
func parseMeta(kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	md := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--meta %q: want key=value", kv)
		}
		if _, dup := md[k]; dup {
			return nil, fmt.Errorf("--meta: key %q given twice", k)
		}
		md[k] = v
	}
	return md, nil
}
