package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/memcluster/memcluster/apiv1"
)

func newNodeCmd(g *globals) *cobra.Command {
	return newGroupCmd("node", "List, drain and remove cluster members",
		newNodeListCmd(g), newNodeDrainCmd(g), newNodeRemoveCmd(g))
}

func newNodeListCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "Print each node's state (alive, suspect, dead, draining, removed), zone, replicas, leaders and bytes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			nodes, err := c.Nodes(cmd.Context())
			if err != nil {
				return fmt.Errorf("node list: %w", err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), apiv1.NodesResponse{Nodes: nodes})
			}
			return printNodes(cmd.OutOrStdout(), nodes)
		},
	}
}

func printNodes(w io.Writer, nodes []apiv1.NodeStatus) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NODE\tSTATE\tZONE\tREPLICAS\tLEADERS\tBYTES\tHTTP")
	for _, n := range nodes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\n", n.ID, n.State, orDash(n.Zone), n.Replicas, n.Leaders, n.Bytes, orDash(n.HTTPAddr))
	}
	return tw.Flush()
}

func newNodeDrainCmd(g *globals) *cobra.Command {
	var wait, cancel bool
	var waitFor time.Duration
	cmd := &cobra.Command{
		Use:   "drain NODE",
		Short: "Move every replica and leadership off a node (it keeps serving by routing)",
		Long: `Move every shard replica and every leadership off NODE while it stays up; it keeps
answering requests by routing them. With --wait (the default) memctl shows progress and returns
when the node holds nothing; --wait=false returns at once. --cancel stops draining.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			node := args[0]
			if cancel {
				res, err := c.UndrainNode(cmd.Context(), node)
				if err != nil {
					return fmt.Errorf("node drain --cancel %s: %w", node, err)
				}
				return printNodeState(cmd, g, res)
			}
			res, err := c.DrainNode(cmd.Context(), node)
			if err != nil {
				return fmt.Errorf("node drain %s: %w", node, err)
			}
			if !wait {
				return printNodeState(cmd, g, res)
			}
			return waitDrained(cmd, g, node, waitFor)
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", true, "wait until the node holds no replica and no leadership")
	cmd.Flags().DurationVar(&waitFor, "wait-timeout", 30*time.Minute, "give up waiting after this long")
	cmd.Flags().BoolVar(&cancel, "cancel", false, "stop draining the node")
	return cmd
}

// waitDrained polls the node list until node holds nothing, printing progress when it changes (a JSON line
// each with -o json).
func waitDrained(cmd *cobra.Command, g *globals, node string, waitFor time.Duration) error {
	c, err := g.client()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(waitFor)
	last := ""
	for {
		nodes, err := c.Nodes(cmd.Context())
		if err != nil {
			return fmt.Errorf("node drain %s: %w", node, err)
		}
		n, ok := findNode(nodes, node)
		if !ok {
			return fmt.Errorf("node drain %s: the node left the member list", node)
		}
		line := fmt.Sprintf("draining %s: %d replicas, %d leaders left", node, n.Replicas, n.Leaders)
		if line != last {
			if g.json() {
				_ = printJSON(cmd.ErrOrStderr(), map[string]any{"node": node, "replicas": n.Replicas, "leaders": n.Leaders})
			} else {
				fmt.Fprintln(cmd.ErrOrStderr(), line)
			}
			last = line
		}
		if n.Replicas == 0 && n.Leaders == 0 {
			return printNodeState(cmd, g, apiv1.NodeStateResponse{Node: node, State: n.State})
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node drain %s: still %d replicas and %d leaders after %s", node, n.Replicas, n.Leaders, waitFor)
		}
		select {
		case <-cmd.Context().Done():
			return cmd.Context().Err()
		case <-time.After(time.Second):
		}
	}
}

func findNode(nodes []apiv1.NodeStatus, id string) (apiv1.NodeStatus, bool) {
	for _, n := range nodes {
		if n.ID == id {
			return n, true
		}
	}
	return apiv1.NodeStatus{}, false
}

func printNodeState(cmd *cobra.Command, g *globals, res apiv1.NodeStateResponse) error {
	if g.json() {
		return printJSON(cmd.OutOrStdout(), res)
	}
	_, err := fmt.Fprintf(cmd.OutOrStdout(), "node %s: %s\n", res.Node, res.State)
	for _, l := range res.Lost {
		fmt.Fprintf(cmd.ErrOrStderr(), "lost: %s\n", l)
	}
	return err
}

func newNodeRemoveCmd(g *globals) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "remove NODE",
		Short: "Take a drained or dead node out of the cluster for good",
		Long: `Take NODE out of the membership and the meta group for good. A removed node that comes
back is refused. Removing a node that still holds replicas, or whose loss would leave a shard
without a quorum or without another copy, is refused unless --force, which says what is lost.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			res, err := c.RemoveNode(cmd.Context(), args[0], force)
			if err != nil {
				return fmt.Errorf("node remove %s: %w", args[0], err)
			}
			return printNodeState(cmd, g, res)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "remove even if shards lose a quorum or their last copy")
	return cmd
}
