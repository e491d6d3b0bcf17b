package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// defaultGraphDepth matches the server's default hop count.
const defaultGraphDepth = 2

type graphOptions struct {
	user, concept string
	depth         int
}

func newGraphCmd(g *globals) *cobra.Command {
	o := &graphOptions{}
	cmd := &cobra.Command{
		Use:   "graph --user U --concept C [--depth N]",
		Short: "Print the graph of a user's current facts around a concept",
		Long: `Print the subgraph of a user's current facts within --depth hops of a concept
(an entity or value, e.g. "Berlin" or "user"): its nodes, nearest first, and the
facts between them as edges. The server bounds the depth (at most 5) and the
number of nodes.`,
		Example: `  memctl graph --user alice --concept user --depth 1`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.check(); err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			res, err := c.Graph(cmd.Context(), o.user, o.concept, o.depth)
			if err != nil {
				return fmt.Errorf("graph %s: %w", o.concept, err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), res)
			}
			return printGraph(cmd.OutOrStdout(), res)
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

func (o *graphOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.user, "user", "", "user id (required)")
	f.StringVar(&o.concept, "concept", "", "the concept to start from (required)")
	f.IntVar(&o.depth, "depth", defaultGraphDepth, "hops to follow from the concept")
}

// check leaves the upper depth bound to the server, which owns it.
func (o *graphOptions) check() error {
	if err := requireUser(o.user); err != nil {
		return err
	}
	if o.concept == "" {
		return errors.New("--concept is required")
	}
	if o.depth < 0 {
		return fmt.Errorf("--depth %d: must not be negative", o.depth)
	}
	return nil
}
