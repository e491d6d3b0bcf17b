package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newTierCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tier",
		Short: "Hot/cold tiering: move aged memories to compressed cold segments",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return fmt.Errorf("tier: name a subcommand (run or status)")
		},
	}
	cmd.AddCommand(newTierRunCmd(g), newTierStatusCmd(g))
	return cmd
}

func newTierStatusCmd(g *globals) *cobra.Command {
	var user string
	cmd := &cobra.Command{
		Use:   "status --user U",
		Short: "A user's hot and cold counts and bytes per memory type",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireUser(user); err != nil {
				return fmt.Errorf("%w (a cluster-wide status is not built yet)", err)
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			st, err := c.TierStatus(cmd.Context(), user)
			if err != nil {
				return fmt.Errorf("tier status: %w", err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), st)
			}
			tw := newTable(cmd.OutOrStdout())
			fmt.Fprintf(tw, "TYPE\tHOT\tHOT BYTES\tCOLD\tCOLD BYTES\tARCHIVE ENTRIES\n")
			for _, t := range st.Types {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\n", t.Type, t.HotCount, t.HotBytes, t.ColdCount, t.ColdBytes, t.Archive)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "user id (required for now)")
	return cmd
}

func newTierRunCmd(g *globals) *cobra.Command {
	var user, olderThan string
	cmd := &cobra.Command{
		Use:   "run --user U [--older-than DURATION]",
		Short: "Tier a user's aged or low-value hot memories now (admin)",
		Long: `Tier a user's aged or low-value hot memories now (admin token).

The per-type policy applies (episodic hot for 90 days unless important or often
read, perceptual 7 days, superseded or retracted facts 30 days; current facts and
working memory stay hot); --older-than (e.g. 180d or 4320h) replaces those ages
for this run. Each group of memories (one user, type, scope and month) becomes a
compressed cold segment, replicated with the shard, and leaves a searchable
archive entry in the hot tier. -o json prints {user_id, moved, segments}.`,
		Example: `  memctl tier run --user alice --older-than 180d -o json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireUser(user); err != nil {
				return fmt.Errorf("%w (tiering every user of the cluster at once is not built yet)", err)
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			res, err := c.TierRun(cmd.Context(), user, olderThan)
			if err != nil {
				return fmt.Errorf("tier run: %w", err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), res)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "tiered %s: %d memories into %d segments\n", user, res.Moved, len(res.Segments))
			return err
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "user id (required for now)")
	cmd.Flags().StringVar(&olderThan, "older-than", "", "tier every tierable memory older than this (e.g. 180d, 4320h)")
	return cmd
}
