package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/apiv1"
)

// Operator actions on members, shards and rebalancing. Each goes through the meta group (from any node: a
// node that does not lead it forwards the proposal) or, for a leadership transfer, to the shard's leader.

// SetNodeState drains a node (state NodeDraining), stops draining it (""), or removes it for good
// (NodeRemoved). Removing a node that still holds replicas, or whose loss would leave a shard without a
// quorum or without another copy of its data, is refused unless force; Lost then names what was given up.
func (n *Node) SetNodeState(ctx context.Context, id, state string, force bool) (apiv1.NodeStateResponse, error) {
	n.awaitMetaCaughtUp(ctx)
	st := n.meta.State()
	res := apiv1.NodeStateResponse{Node: id, State: state}
	if _, ok := st.Nodes[id]; !ok {
		return res, errorf(ErrUnknownNode, "no member %q", id)
	}
	if st.StateOf(id) == NodeRemoved {
		return res, errorf(ErrRefused, "node %s was removed already", id)
	}
	switch state {
	case NodeDraining:
		if err := n.canDrain(st, id); err != nil {
			return res, err
		}
	case NodeRemoved:
		lost := removalLoss(st, n.shardViews(ctx, st), n.liveMembers(), id)
		if len(lost) > 0 && !force {
			return res, errorf(ErrRefused, "removing %s would lose %v; drain it first, or give --force", id, lost)
		}
		res.Lost = lost
	case "":
		res.State = "alive"
	default:
		return res, errorf(ErrRefused, "unknown node state %q", state)
	}
	return res, n.proposeMetaAnywhere(ctx, metaCommand{V: metaCommandVersion, Op: "set_state", NodeID: id, State: state})
}

// canDrain refuses a drain that could never finish: too few other eligible nodes for the replication factor.
func (n *Node) canDrain(st MetaState, id string) error {
	live := n.liveMembers()
	others := 0
	for other := range st.Nodes {
		if _, ok := live[other]; ok && other != id && st.StateOf(other) == "" {
			others++
		}
	}
	if others < st.Replicas {
		return errorf(ErrRefused, "draining %s leaves %d live nodes for %d replicas per shard: add a node first", id, others, st.Replicas)
	}
	return nil
}

// removalLoss names the shards that losing id would hurt: data on no other live node, or fewer live voters
// than a quorum of the group. A shard's group is its placement and what its leader reports: a node the
// placement moved off is still a voter until the leader removes it, and losing it then can cost the quorum
// (a removal that left a group with a dead voter and the removed one could never change its membership again).
func removalLoss(st MetaState, views []shardView, live map[string]NodeInfo, id string) []string {
	_, alive := live[id]
	var lost []string
	for s, placed := range st.Placement {
		reps := placed
		if s < len(views) {
			reps = views[s].voting(placed)
		}
		if !slices.Contains(reps, id) {
			continue
		}
		others := 0
		for _, r := range reps {
			if _, ok := live[r]; ok && r != id {
				others++
			}
		}
		switch {
		case others == 0:
			lost = append(lost, fmt.Sprintf("shard %d: its only live copy", s))
		case others < len(reps)/2+1:
			lost = append(lost, fmt.Sprintf("shard %d: quorum (%d of %d live)", s, others, len(reps)))
		case alive:
			lost = append(lost, fmt.Sprintf("shard %d: a replica not yet moved", s))
		}
	}
	return lost
}

// SetPaused pauses or resumes rebalancing.
func (n *Node) SetPaused(ctx context.Context, paused bool) error {
	return n.proposeMetaAnywhere(ctx, metaCommand{V: metaCommandVersion, Op: "set_paused", Paused: paused})
}

// TransferLeader moves shard's leadership to node to, which must hold a voting replica, and returns once to
// leads (or ctx ends).
func (n *Node) TransferLeader(ctx context.Context, shard uint32, to string) error {
	st := n.meta.State()
	if int(shard) >= len(st.Placement) {
		return errorf(ErrUnknownShard, "no shard %d (the cluster has %d)", shard, len(st.Placement))
	}
	if !slices.Contains(st.Placement[shard], to) {
		return errorf(ErrRefused, "node %q holds no replica of shard %d (replicas %v)", to, shard, st.Placement[shard])
	}
	info, ok := n.liveMembers()[to]
	if !ok {
		return errorf(ErrRefused, "node %q is not alive", to)
	}
	return n.onShard(ctx, shard, "transfer", false, func(ctx context.Context, r *Replica) error {
		return n.transferLocal(ctx, r, to, info.RaftAddr)
	}, func(ctx context.Context, addr string) error {
		return n.call(ctx, http.MethodPost, addr, fmt.Sprintf("%sshards/%d/transfer-leader", internalPrefix, shard),
			url.Values{"to": {to}}, "", nil, &struct{}{})
	})
}

func (n *Node) transferLocal(ctx context.Context, r *Replica, to, addr string) error {
	if r.Leader() == to {
		return nil
	}
	if !r.IsLeader() {
		return ErrNotLeader
	}
	if err := futureError(ctx, r.raft.LeadershipTransferToServer(raft.ServerID(to), raft.ServerAddress(addr))); err != nil {
		return fmt.Errorf("transfer shard %d to %s: %w", r.Shard, to, err)
	}
	for r.Leader() != to {
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return fmt.Errorf("shard %d: %s did not take the leadership: %w", r.Shard, to, err)
		}
	}
	return nil
}

func (n *Node) handleTransfer(w http.ResponseWriter, r *http.Request) {
	rep, ok := n.localReplica(w, r)
	if !ok {
		return
	}
	to := r.URL.Query().Get("to")
	info, ok := n.liveMembers()[to]
	if !ok {
		writeRPCError(w, &rpcError{Code: "invalid", Message: fmt.Sprintf("node %q is not alive", to)})
		return
	}
	if err := n.transferLocal(r.Context(), rep, to, info.RaftAddr); err != nil {
		writeRPCError(w, toRPCError(err, rep))
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// proposeMetaAnywhere commits an operator's meta command through the meta leader, wherever it is.
func (n *Node) proposeMetaAnywhere(ctx context.Context, c metaCommand) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	for backoff := 20 * time.Millisecond; ; backoff = min(2*backoff, 500*time.Millisecond) {
		if n.IsMetaLeader() {
			return futureError(ctx, n.mraft.raft.Apply(b, 5*time.Second))
		}
		if _, id := n.mraft.raft.LeaderWithID(); id != "" {
			if addr := n.httpAddrOf(string(id)); addr != "" {
				err = n.call(ctx, http.MethodPost, addr, internalPrefix+"meta/propose", nil, "application/json", b, &struct{}{})
				if err == nil || !retryable(err) {
					return err
				}
			}
		}
		if serr := sleepCtx(ctx, backoff); serr != nil {
			return fmt.Errorf("meta group: %w (last error: %v)", ErrNoLeader, err)
		}
	}
}

// handleMetaPropose applies an operator's meta command on the meta leader (only operator operations).
func (n *Node) handleMetaPropose(w http.ResponseWriter, r *http.Request) {
	var c metaCommand
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.V != metaCommandVersion || !slices.Contains([]string{"set_state", "set_paused", "split_begin"}, c.Op) {
		writeRPCError(w, &rpcError{Code: "invalid", Message: fmt.Sprintf("not an operator meta command (%v)", err)})
		return
	}
	if !n.IsMetaLeader() {
		writeRPCError(w, &rpcError{Code: "not_leader", Message: "not the meta leader"})
		return
	}
	if err := futureError(r.Context(), n.mraft.raft.Apply(b, 5*time.Second)); err != nil {
		writeRPCError(w, &rpcError{Code: "not_leader", Message: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// tellRemoved tells removed members that are still alive that they are out (at most every 10s each).
func (n *Node) tellRemoved(st MetaState, live map[string]NodeInfo) {
	for id, info := range live {
		if st.StateOf(id) != NodeRemoved || time.Since(n.told[id]) < 10*time.Second {
			continue
		}
		n.told[id] = time.Now()
		go func(addr string) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = n.call(ctx, http.MethodPost, addr, internalPrefix+"removed", nil, "", nil, &struct{}{})
		}(info.HTTPAddr)
	}
}

func (n *Node) handleRemoved(w http.ResponseWriter, _ *http.Request) {
	n.markRemoved()
	writeJSON(w, http.StatusOK, struct{}{})
}

// markRemoved records that this node was removed from the cluster: it stops taking part and refuses to start
// again on this data directory.
func (n *Node) markRemoved() {
	if n.removed.Swap(true) {
		return
	}
	_ = n.db.SetNode("removed", []byte("1"))
	n.log.Error("this node was removed from the cluster: it no longer serves; wipe its data directory to join again as a new node")
}
