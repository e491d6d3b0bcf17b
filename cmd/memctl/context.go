package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/eval"
)

type contextOptions struct {
	user, run, now, session string
	mode                    string
	budget                  int
	explain                 bool
}

func newContextCmd(g *globals) *cobra.Command {
	o := &contextOptions{}
	cmd := &cobra.Command{
		Use:   "context --user U [--run R] [--budget TOKENS] [--explain] [--now RFC3339] QUERY... | -",
		Short: "Build the context an agent should see for a query: planned, judged, packaged to a token budget",
		Long: `Build the context an agent should see for a query.

The node plans the query (intent, the user's entities it names, a time range such
as "last week" relative to --now, which memory types to read), retrieves hot
memory per type (the session's window with --run, current facts around the
query's entities, episodic and perceptual hybrid search within the time range),
judges its confidence, searches the archive when that is too low, and packages
the evidence into blocks that fit --budget tokens. Prints the rendered context;
-o json prints blocks, confidence, escalated, uncertain, tokens and, with
--explain, the plan and every stage.`,
		Example: `  memctl context --user alice --budget 200 "What did I do last week?"
  memctl context --user alice --run r42 --explain -o json "where do I live now"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := o.request(args, cmd.InOrStdin())
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			res, err := c.Context(cmd.Context(), o.user, req)
			if err != nil {
				return fmt.Errorf("context: %w", err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), res)
			}
			return printContext(cmd.OutOrStdout(), res)
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

func (o *contextOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.user, "user", "", "user id (required)")
	f.StringVar(&o.run, "run", "", "run id: read this session's working memory first")
	f.IntVar(&o.budget, "budget", apiv1.DefaultContextBudget, "token budget of the context (20..100000)")
	f.BoolVar(&o.explain, "explain", false, "include the plan and every stage")
	f.StringVar(&o.now, "now", "", "reference time for relative expressions, RFC 3339 (default: the node's clock)")
	f.StringVar(&o.mode, "mode", "", "search mode of the memory reads: pipeline (server default) or hybrid")
	f.StringVar(&o.session, "session-type", "", "private (default) or group: a group session sees shared memory only")
}

func (o *contextOptions) request(args []string, in io.Reader) (apiv1.ContextRequest, error) {
	if err := requireUser(o.user); err != nil {
		return apiv1.ContextRequest{}, err
	}
	q, err := textArg(args, in, "QUERY")
	if err != nil {
		return apiv1.ContextRequest{}, err
	}
	if o.budget < 20 || o.budget > 100000 {
		return apiv1.ContextRequest{}, fmt.Errorf("--budget %d: must be between 20 and 100000", o.budget)
	}
	if o.mode != "" && o.mode != string(eval.ModePipeline) && o.mode != string(eval.ModeHybrid) {
		return apiv1.ContextRequest{}, fmt.Errorf("--mode %q: want pipeline or hybrid", o.mode)
	}
	req := apiv1.ContextRequest{Query: q, RunID: o.run, Budget: o.budget, Explain: o.explain, SessionType: o.session,
		Mode: o.mode}
	if o.now != "" {
		t, err := parseTime("now", o.now)
		if err != nil {
			return req, err
		}
		req.Now = &t
	}
	return req, nil
}

func printContext(w io.Writer, r apiv1.ContextResponse) error {
	status := "confident"
	if r.Uncertain {
		status = "uncertain"
	}
	esc := ""
	if r.Escalated {
		esc = ", archive searched"
	}
	if _, err := fmt.Fprintf(w, "%s (confidence %.2f%s), %d of %d tokens\n\n%s", status, r.Confidence, esc, r.Tokens,
		r.Budget, r.Text); err != nil {
		return err
	}
	if len(r.LeftOut) > 0 {
		_, err := fmt.Fprintf(w, "\n(%d items left out or cut)\n", len(r.LeftOut))
		return err
	}
	return nil
}
