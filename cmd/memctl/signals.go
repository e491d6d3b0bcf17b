package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

func newSignalsCmd(g *globals) *cobra.Command {
	return newGroupCmd("signals", "Read perceptual signals (store them with perceive)", newSignalsDailyCmd(g))
}

func newSignalsDailyCmd(g *globals) *cobra.Command {
	var user, signal string
	cmd := &cobra.Command{
		Use:     "daily --user U --signal NAME",
		Short:   "Print a signal's daily aggregates (count, min, max, mean, median), oldest first",
		Long:    "Print a signal's daily aggregates (count, min, max, mean, median) per UTC day, oldest first.",
		Example: `  memctl signals daily --user alice --signal heart_rate`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireUser(user); err != nil {
				return err
			}
			if signal == "" {
				return errors.New("--signal is required")
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			res, err := c.Daily(cmd.Context(), user, signal)
			if err != nil {
				return fmt.Errorf("signals daily %s: %w", signal, err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), res)
			}
			return printAggregates(cmd.OutOrStdout(), res)
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "user id (required)")
	cmd.Flags().StringVar(&signal, "signal", "", "signal name (required)")
	return cmd
}
