package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

func newClusterRebalanceCmd(g *globals) *cobra.Command {
	var pause, resume bool
	cmd := &cobra.Command{
		Use:   "rebalance --pause|--resume",
		Short: "Pause or resume rebalancing (repairs of lost replicas go on while paused)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if pause == resume {
				return errors.New("give one of --pause or --resume")
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			res, err := c.Rebalance(cmd.Context(), pause)
			if err != nil {
				return fmt.Errorf("cluster rebalance: %w", err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), res)
			}
			state := "resumed"
			if res.Paused {
				state = "paused"
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "rebalancing %s\n", state)
			return err
		},
	}
	cmd.Flags().BoolVar(&pause, "pause", false, "stop starting replica moves and leader transfers")
	cmd.Flags().BoolVar(&resume, "resume", false, "start them again")
	return cmd
}
