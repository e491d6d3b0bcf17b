package cluster

import (
	"context"
	"net/http"
	"slices"
	"sort"
	"time"
)

// A node that restarts holds replicas whose groups may have moved on while it was down: a node dead past
// --dead-node-timeout has its replicas placed elsewhere and is removed from their groups. Started at once, such
// a replica still carries the configuration in which it votes, campaigns, and — with the vote of a replica
// that was wiped and re-added since and has only caught up to an older snapshot — could win with a shorter
// log and cut committed entries from the others (seen in the chaos campaign). So the replicas it held wait
// until its meta replica has caught up with the meta leader; then those still placed here start, those that
// the shard's leader still counts start (a move under way), and the others are dropped unstarted. A replica
// whose shard has no leader to ask starts after heldQuorumWait: the group may need its vote to elect one.

// metaCaughtUp reports whether this node's meta replica has applied what the meta leader had applied when
// asked (the leader itself is caught up).
func (n *Node) metaCaughtUp() bool {
	if n.IsMetaLeader() {
		return true
	}
	_, id := n.mraft.raft.LeaderWithID()
	addr := n.httpAddrOf(string(id))
	if id == "" || addr == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var rep NodeReport
	if err := n.call(ctx, http.MethodGet, addr, internalPrefix+"node", nil, "", nil, &rep); err != nil || rep.MetaApplied == 0 {
		return false
	}
	return n.mraft.raft.AppliedIndex() >= rep.MetaApplied
}

// metaCatchUpWait bounds how long an operator's decision waits for this node's meta replica to catch up.
const metaCatchUpWait = 5 * time.Second

// awaitMetaCaughtUp waits, up to metaCatchUpWait or ctx's end, until this node's meta replica has applied what
// the meta leader had: an operator's decision (drain, remove) reads the meta state as the leader has it, not as
// a node that joined a moment ago or lags does (a drain asked of such a node named a member it had not applied
// yet unknown). It returns either way; the meta leader applies the decision to its own state.
func (n *Node) awaitMetaCaughtUp(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, metaCatchUpWait)
	defer cancel()
	for !n.metaCaughtUp() {
		if sleepCtx(ctx, 50*time.Millisecond) != nil {
			return
		}
	}
}

// restartHeld starts or drops the replicas held before the restart, once the meta state can be trusted. It
// reports whether every one of them is settled.
func (n *Node) restartHeld(st MetaState) bool {
	n.mu.Lock()
	held := slices.Sorted(func(yield func(uint32) bool) {
		for s := range n.held {
			if !yield(s) {
				return
			}
		}
	})
	n.mu.Unlock()
	if len(held) == 0 {
		return true
	}
	if !n.metaCaughtUp() {
		return false
	}
	if n.heldSince.IsZero() {
		n.heldSince = time.Now()
	}
	// The indexes of the replicas started here load behind their groups (loading.go), once every group is back:
	// a load takes the CPU the starts need. A load already under way (a replica held back a tick earlier) is not
	// waited for: the reconcile loop runs this.
	select {
	case n.loadSem <- struct{}{}:
		defer func() { <-n.loadSem }()
	default:
	}
	for _, s := range held {
		placed := placedOn(st, s)
		member, known := slices.Contains(placed, n.cfg.NodeID), true
		if !member {
			member, known = n.groupCounts(s, placed)
		}
		switch {
		case !known && time.Since(n.heldSince) < heldQuorumWait:
			continue // ask again next time
		case member || !known:
			if _, err := n.startHeld(s); err != nil {
				n.log.Error("restart held replica", "shard", s, "err", err)
				continue
			}
		default:
			if err := n.markDropped(s); err != nil {
				n.log.Error("keep the data of a replica moved away while this node was down", "shard", s, "err", err)
				continue
			}
			if err := n.db.DropShard(s); err != nil {
				n.log.Error("drop a replica moved away while this node was down", "shard", s, "err", err)
				continue
			}
			_ = n.removeSnapshots(s)
			n.log.Info("replica moved away while this node was down: dropped without starting it", "shard", s)
		}
		n.mu.Lock()
		delete(n.held, s)
		n.mu.Unlock()
		n.persistReplicas()
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	return len(n.held) == 0
}

// heldQuorumWait is how long a restarted node waits for the leader of a shard it held (and that is placed
// elsewhere now) before it starts its replica anyway.
const heldQuorumWait = 10 * time.Second

// groupCounts asks the nodes of ask, in turn, until one reports leading shard, and says whether that leader's
// group still counts this node (voter or non-voter); known is false when none of them leads it.
func (n *Node) groupCounts(shard uint32, ask []string) (member, known bool) {
	for _, id := range ask {
		if id == n.cfg.NodeID {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var rep NodeReport
		err := n.call(ctx, http.MethodGet, n.httpAddrOf(id), internalPrefix+"node", nil, "", nil, &rep)
		cancel()
		if err != nil {
			continue
		}
		for _, rr := range rep.Replicas {
			if rr.Shard == shard && rr.State == "Leader" {
				return slices.Contains(rr.Voters, n.cfg.NodeID) || slices.Contains(rr.Nonvoters, n.cfg.NodeID), true
			}
		}
	}
	return false, false
}

// heldShards lists the replicas this node runs and those it held before a restart and has not settled yet.
func (n *Node) heldShards() []uint32 {
	out := n.LocalShards()
	n.mu.RLock()
	for s := range n.held {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	n.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
