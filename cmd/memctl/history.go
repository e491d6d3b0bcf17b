package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/memcluster/memcluster/apiv1"
)

func newHistoryCmd(g *globals) *cobra.Command {
	var user string
	cmd := &cobra.Command{
		Use:   "history --user U [ID]",
		Short: "List the recorded changes of one memory, or of all of a user's memories",
		Long: `List the recorded changes (ADD, UPDATE, DELETE, NONE) of the memory or fact ID,
oldest first, each with its time, cause, and what it was before and after; without
ID, every change of the user's memories. -o json prints the before and after
records whole.`,
		Example: `  memctl history --user alice 01JQ8Z6X5M9T4C2B7N3K1H0GFD
  memctl history --user alice -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireUser(user); err != nil {
				return err
			}
			id, err := optionalIDArg(args)
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			evs, err := c.History(cmd.Context(), user, id)
			if err != nil {
				return fmt.Errorf("history: %w", err)
			}
			if evs == nil {
				evs = []apiv1.HistoryEvent{} // print [] rather than null, as the server does
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), apiv1.HistoryResponse{UserID: user, Events: evs})
			}
			return printHistory(cmd.OutOrStdout(), evs)
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "user id (required)")
	return cmd
}
