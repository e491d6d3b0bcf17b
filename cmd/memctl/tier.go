package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memcluster/memcluster/apiv1"
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
		Use:   "status [--user U]",
		Short: "Hot and cold counts and bytes per memory type: a user's, or per shard across the cluster",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			warnMissing(cmd.ErrOrStderr(), st.MissingShards)
			return printTierStatus(cmd.OutOrStdout(), st)
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "user id (default: every shard of the cluster, per shard)")
	return cmd
}

func newTierRunCmd(g *globals) *cobra.Command {
	var user, olderThan string
	cmd := &cobra.Command{
		Use:   "run [--user U] [--older-than DURATION]",
		Short: "Tier aged or low-value hot memories now: a user's, or every user's (admin)",
		Long: `Tier a user's aged or low-value hot memories now (admin token).

The per-type policy applies (episodic hot for 90 days unless important or often
read, perceptual 7 days, superseded or retracted facts 30 days; current facts and
working memory stay hot); --older-than (e.g. 180d or 4320h) replaces those ages
for this run. Each group of memories (one user, type, scope and month) becomes a
compressed cold segment, replicated with the shard, and leaves a searchable
archive entry in the hot tier. -o json prints {user_id, moved, segments}.

Without --user every user of every shard is tiered, shards in parallel, within the
server's request deadline; shards not finished are named ("partial") and what they
did finish is kept: run again to go on.`,
		Example: `  memctl tier run --user alice --older-than 180d -o json
  memctl tier run -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			warnMissing(cmd.ErrOrStderr(), res.MissingShards)
			if res.Partial && len(res.MissingShards) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "partial: stopped before the request deadline with more to move; run again to go on")
			}
			who := user
			if who == "" {
				who = fmt.Sprintf("%d users", res.Users)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "tiered %s: %d memories into %d segments\n", who, res.Moved, len(res.Segments))
			return err
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "user id (default: every user of the cluster)")
	cmd.Flags().StringVar(&olderThan, "older-than", "", "tier every tierable memory older than this (e.g. 180d, 4320h)")
	return cmd
}

// printTierStatus prints one row per type (a user's status) or per shard and type (the cluster's), then totals.
func printTierStatus(w io.Writer, st apiv1.TierStatusResponse) error {
	tw := newTable(w)
	row := func(shard string, t apiv1.TierCount) {
		fmt.Fprintf(tw, "%s%s\t%d\t%d\t%d\t%d\t%d\n", shard, t.Type, t.HotCount, t.HotBytes, t.ColdCount, t.ColdBytes, t.Archive)
	}
	if st.UserID != "" {
		fmt.Fprintf(tw, "TYPE\tHOT\tHOT BYTES\tCOLD\tCOLD BYTES\tARCHIVE ENTRIES\n")
		for _, t := range st.Types {
			row("", t)
		}
		return tw.Flush()
	}
	fmt.Fprintf(tw, "SHARD\tTYPE\tHOT\tHOT BYTES\tCOLD\tCOLD BYTES\tARCHIVE ENTRIES\n")
	for _, sh := range st.Shards {
		for _, t := range sh.Types {
			row(fmt.Sprintf("%d\t", sh.Shard), t)
		}
	}
	for _, t := range st.Types {
		row("all\t", t)
	}
	return tw.Flush()
}

// warnMissing writes one stderr line per shard a cluster-wide operation did not hear from.
func warnMissing(w io.Writer, missing []apiv1.ShardFailure) {
	for _, m := range missing {
		fmt.Fprintf(w, "partial: shard %d did not answer: %s\n", m.Shard, m.Error)
	}
}
