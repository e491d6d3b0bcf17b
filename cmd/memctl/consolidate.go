package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newConsolidateCmd(g *globals) *cobra.Command {
	var user string
	cmd := &cobra.Command{
		Use:   "consolidate --user U",
		Short: "Run pattern consolidation now: recurring episodes become patterns, strong ones facts",
		Long: `Run pattern consolidation for a user now: recent episodes are clustered into
recurring patterns; a pattern confident enough is promoted to a fact (ADD), one
weakened by corrections is demoted (its fact retracted). Prints one line per
pattern (its KEY is what "patterns correct" takes) and per fact decision.`,
		Example: `  memctl consolidate --user alice`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireUser(user); err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			res, err := c.Consolidate(cmd.Context(), user)
			if err != nil {
				return fmt.Errorf("consolidate: %w", err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), res)
			}
			return printPatterns(cmd.OutOrStdout(), res, res.Episodes)
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "user id (required)")
	return cmd
}
