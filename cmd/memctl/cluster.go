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

// exitUnhealthy is what `cluster status --check` exits with on an unhealthy
// cluster, apart from 1 (could not ask at all).
const exitUnhealthy = 2

func newClusterCmd(g *globals) *cobra.Command {
	return newGroupCmd("cluster", "Inspect the cluster and pause or resume rebalancing",
		newClusterStatusCmd(g), newClusterRebalanceCmd(g))
}

func newClusterStatusCmd(g *globals) *cobra.Command {
	var check bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print nodes, shards and whether the cluster is healthy",
		Long: `Print the cluster as the answering node sees it: its nodes, its shards, and
whether every shard has a leader and its full replica count alive.

The exit code is 0 whether or not the cluster is healthy; with --check it is 2
when the cluster is unhealthy (and 1 when the node could not be asked).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			st, err := c.ClusterStatus(cmd.Context())
			if err != nil {
				return fmt.Errorf("cluster status: %w", err)
			}
			if g.json() {
				err = printJSON(cmd.OutOrStdout(), st)
			} else {
				err = printClusterStatus(cmd.OutOrStdout(), st)
			}
			if err != nil {
				return err
			}
			if check && !st.Healthy {
				return &exitError{code: exitUnhealthy, err: errors.New("cluster is unhealthy")}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&check, "check", false, "exit 2 when the cluster is unhealthy")
	return cmd
}

// printClusterStatus writes a nodes table, a shards table, and the health
// line last so `tail -1` finds it.
func printClusterStatus(w io.Writer, st apiv1.ClusterStatus) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NODE\tSTATE\tZONE\tREPLICAS\tLEADERS\tHTTP\tRAFT\tGOSSIP")
	for _, n := range st.Nodes {
		id := n.ID
		if id == st.NodeID {
			id += "*" // the node that answered
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", id, n.State, orDash(n.Zone), n.Replicas, n.Leaders,
			orDash(n.HTTPAddr), orDash(n.RaftAddr), orDash(n.GossipAddr))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = newTable(w)
	fmt.Fprintln(tw, "SHARD\tLEADER\tLIVE/WANT\tAPPLIED\tREPLICAS")
	for _, s := range st.Shards {
		leader := s.Leader
		if leader == "" {
			leader = "(none)"
		}
		applied := "-"
		if s.AppliedIndex > 0 {
			applied = strconv.FormatUint(s.AppliedIndex, 10)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d/%d\t%s\t%s\n", s.ID, leader, s.LiveReplicas, s.Want, applied, orDash(strings.Join(s.Replicas, ",")))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	printMoves(w, st.Moves)
	if st.RebalancePaused {
		fmt.Fprintln(w, "rebalancing: paused")
	}
	if st.Split != nil {
		fmt.Fprintf(w, "splitting: shard %d into %d\n", st.Split.Shard, st.Split.Child)
	}
	fmt.Fprintf(w, "shard map: %d shards over %d buckets, version %d\n", len(st.Shards), st.Buckets, st.MapVersion)
	_, err := fmt.Fprintf(w, "\nhealthy: %t\n", st.Healthy)
	return err
}
