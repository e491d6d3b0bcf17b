package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memcluster/memcluster/apiv1"
)

func newShardCmd(g *globals) *cobra.Command {
	return newGroupCmd("shard", "List, split and move the leadership of shards", newShardListCmd(g), newShardSplitCmd(g),
		newShardTransferCmd(g))
}

func newShardListCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "Print each shard's replicas, leader, bytes, applied index, each replica's lag, and the moves under way",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			res, err := c.Shards(cmd.Context())
			if err != nil {
				return fmt.Errorf("shard list: %w", err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), res)
			}
			return printShards(cmd.OutOrStdout(), res)
		},
	}
}

func printShards(w io.Writer, res apiv1.ShardsResponse) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "SHARD\tRANGE\tLEADER\tREPLICAS\tMEMORIES\tBYTES\tAPPLIED\tLAG")
	for _, s := range res.Shards {
		var lag []string
		for _, p := range s.Progress {
			lag = append(lag, fmt.Sprintf("%s:%d", p.Node, p.Lag))
		}
		mems := "-"
		if s.Memories >= 0 {
			mems = strconv.FormatInt(s.Memories, 10)
		}
		rng := fmt.Sprintf("b%d:%.4s..%.4s", s.Range.Bucket, s.Range.First, s.Range.Last)
		if s.Splitting {
			rng += " (splitting)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", s.ID, rng, orDash(s.Leader), orDash(strings.Join(s.Replicas, ",")),
			mems, s.Bytes, s.AppliedIndex, orDash(strings.Join(lag, " ")))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	printMoves(w, res.Moves)
	return nil
}

// printMoves writes one line per replica move under way.
func printMoves(w io.Writer, moves []apiv1.MoveStatus) {
	for _, m := range moves {
		fmt.Fprintf(w, "moving: shard %d %s%s (%s)\n", m.Shard, arrow(m.From, "-"), arrow(m.To, "+"), m.Stage)
	}
}

func arrow(id, sign string) string {
	if id == "" {
		return ""
	}
	return sign + id
}

func newShardTransferCmd(g *globals) *cobra.Command {
	var to string
	cmd := &cobra.Command{
		Use:   "transfer-leader SHARD --to NODE",
		Short: "Move a shard's leadership to one of its replicas",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			shard, err := strconv.Atoi(args[0])
			if err != nil || shard < 0 {
				return fmt.Errorf("shard: not a shard number: %q", args[0])
			}
			if to == "" {
				return errors.New("--to NODE is required")
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			res, err := c.TransferLeader(cmd.Context(), shard, to)
			if err != nil {
				return fmt.Errorf("shard transfer-leader %d: %w", shard, err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), res)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "shard %d: led by %s\n", res.Shard, res.Leader)
			return err
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "node to lead the shard (required)")
	return cmd
}
