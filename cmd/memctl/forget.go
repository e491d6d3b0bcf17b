package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/memcluster/memcluster/apiv1"
)

func newForgetCmd(g *globals) *cobra.Command {
	var user string
	var yes bool
	cmd := &cobra.Command{
		Use:   "forget --user U --yes",
		Short: "Remove every memory of a user (right to be forgotten)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireUser(user); err != nil {
				return err
			}
			if !yes {
				return fmt.Errorf("forget removes every memory of %q and cannot be undone: add --yes", user)
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			n, err := c.DeleteUser(cmd.Context(), user)
			if err != nil {
				return fmt.Errorf("forget %s: %w", user, err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), apiv1.ForgetResponse{UserID: user, Deleted: n})
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "forgot %s: %d memories removed\n", user, n)
			return err
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "user id (required)")
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm: the removal cannot be undone")
	return cmd
}
