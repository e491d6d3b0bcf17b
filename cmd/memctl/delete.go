package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/memcluster/memcluster/apiv1"
)

func newDeleteCmd(g *globals) *cobra.Command {
	var user string
	cmd := &cobra.Command{
		Use:   "delete --user U ID",
		Short: "Delete one memory",
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireUser(user); err != nil {
				return err
			}
			id, err := idArg(args)
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			if err := c.Delete(cmd.Context(), user, id); err != nil {
				return fmt.Errorf("delete %s: %w", id, err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), apiv1.DeleteResponse{ID: id, Deleted: true})
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "deleted %s\n", id)
			return err
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "user id (required)")
	return cmd
}
