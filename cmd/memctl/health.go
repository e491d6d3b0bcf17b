package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newHealthCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "health",
		Short: "Check that the node is up (/healthz) and ready to serve (/readyz)",
		Long: `Check that the node is up (/healthz) and ready to serve (/readyz).
Exits 0 only when both pass.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			if err := c.Health(cmd.Context()); err != nil {
				return fmt.Errorf("%s is not healthy: %w", c.Addr(), err)
			}
			if err := c.Ready(cmd.Context()); err != nil {
				return fmt.Errorf("%s is not ready: %w", c.Addr(), err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), map[string]any{"addr": c.Addr(), "healthy": true, "ready": true})
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s is healthy and ready\n", c.Addr())
			return err
		},
	}
}
