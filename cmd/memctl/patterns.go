package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newPatternsCmd(g *globals) *cobra.Command {
	return newGroupCmd("patterns", "Correct the patterns that consolidation found", newPatternsCorrectCmd(g))
}

func newPatternsCorrectCmd(g *globals) *cobra.Command {
	var user string
	cmd := &cobra.Command{
		Use:   "correct --user U KEY",
		Short: "Record that a pattern is wrong: its confidence drops, and it may be demoted or retracted",
		Long: `Record a user correction of the pattern KEY (as consolidate prints it): its
confidence is halved; below the promotion threshold a promoted pattern is demoted
and its fact retracted; a pattern corrected twice, or too weak, is retracted for
good. Prints the pattern and the fact decisions.`,
		Example: `  memctl patterns correct --user alice booked+flight+morning`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireUser(user); err != nil {
				return err
			}
			key, err := keyArg(args)
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			res, err := c.CorrectPattern(cmd.Context(), user, key)
			if err != nil {
				return fmt.Errorf("patterns correct %s: %w", key, err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), res)
			}
			return printPatterns(cmd.OutOrStdout(), res, -1)
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "user id (required)")
	return cmd
}
