package cluster

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/raftstore"
	"github.com/memcluster/memcluster/shardmap"
	"github.com/memcluster/memcluster/storage"
)

// Online shard splits. One split at a time, in four steps:
//  1. split_begin (meta group): the next shard id takes the upper half of the parent's range and the parent's
//     placement. Routing still sends the child's users to the parent; rebalancing leaves both alone.
//  2. The meta leader waits until the parent's raft membership is its placement, then proposes CmdSplit in
//     the parent's log, naming those voters as the child's first configuration.
//  3. Every parent replica applies it at the same index, in one Pebble batch (storage/split.go): the child's
//     users move to the child's keyspace, at applied index (1, 1), with a birth record of the voters.
//  4. Those nodes start the child's group from a raft snapshot at (1, 1) whose configuration is the voters
//     (prepareBorn): the same on every voter, like a bootstrap. A voter that missed the split entry (it got a
//     parent snapshot past it) starts empty and is sent the child leader's snapshot. Once the child has a
//     leader, split_done routes its users to it.
// From step 3 the parent refuses the child's users (storage.ErrWrongShard) and coordinators follow to the
// child (route.go), so no write lands on the wrong side and none is lost.

// SplitShard splits shard in two and, with wait, returns once the new shard serves its users.
func (n *Node) SplitShard(ctx context.Context, shard uint32, wait bool) (apiv1.SplitResponse, error) {
	res := apiv1.SplitResponse{Shard: int(shard)}
	// A node that has not applied the meta group's first entry yet (it joined, or it restarted, a moment ago)
	// waits for it, up to ctx's deadline, as routing does.
	if _, err := n.ShardCount(ctx); err != nil {
		return res, err
	}
	st := n.meta.State()
	if int(shard) >= st.Shards {
		return res, errorf(ErrUnknownShard, "no shard %d (the cluster has %d)", shard, st.Shards)
	}
	// One split at a time, refused at once: callers waiting for a split's end would all propose theirs the
	// moment it came, and the meta state machine ignores all but the first.
	if st.Split != nil {
		return res, errorf(ErrRefused, "shard %d is splitting into %d: one split at a time", st.Split.Parent, st.Split.Child)
	}
	lower, upper, err := st.Ranges[shard].Split()
	if err != nil {
		return res, errorf(ErrRefused, "shard %d: %v", shard, err)
	}
	if err := n.proposeMetaAnywhere(ctx, metaCommand{V: metaCommandVersion, Op: "split_begin", Shard: shard}); err != nil {
		return res, err
	}
	n.metrics.splits.WithLabelValues("begun").Inc()
	child, err := n.awaitMeta(ctx, func(st MetaState) (int, bool) {
		return slices.Index(st.Ranges, upper), slices.Contains(st.Ranges, upper)
	})
	if err != nil {
		return res, err
	}
	res.Child, res.Range, res.ChildRange = child, apiRange(lower), apiRange(upper)
	if wait {
		if _, err := n.awaitMeta(ctx, func(st MetaState) (int, bool) {
			return 0, st.Split == nil || st.Split.Child != uint32(child)
		}); err != nil {
			return res, fmt.Errorf("shard %d → %d still splitting: %w", shard, child, err)
		}
		res.Done = true
	}
	st = n.meta.State()
	res.Shards, res.MapVersion = st.Shards, st.MapVersion
	return res, nil
}

// awaitMeta polls this node's meta state until cond holds, up to ctx's deadline.
func (n *Node) awaitMeta(ctx context.Context, cond func(MetaState) (int, bool)) (int, error) {
	for {
		if v, ok := cond(n.meta.State()); ok {
			return v, nil
		}
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return 0, err
		}
	}
}

func apiRange(r shardmap.Range) apiv1.HashRange {
	return apiv1.HashRange{Bucket: r.Bucket, First: fmt.Sprintf("%016x", r.First), Last: fmt.Sprintf("%016x", r.Last),
		Fraction: r.Fraction()}
}

// autoSplit, run by the meta leader when it plans, begins a split of the largest shard above
// SplitAboveMemories (none while a split is under way, or while that shard's membership is changing).
func (n *Node) autoSplit(st MetaState, views []shardView) {
	if n.cfg.SplitAboveMemories <= 0 || st.Split != nil || st.Shards >= maxShards {
		return
	}
	best := -1
	for s, v := range views {
		if v.memories > n.cfg.SplitAboveMemories && v.converged(st.Placement[s]) &&
			st.Ranges[s].First != st.Ranges[s].Last && (best < 0 || v.memories > views[best].memories) {
			best = s
		}
	}
	if best < 0 {
		return
	}
	n.log.Info("split: shard above the threshold", "shard", best, "memories", views[best].memories,
		"threshold", n.cfg.SplitAboveMemories)
	n.metrics.splits.WithLabelValues("begun").Inc()
	n.proposeMeta(metaCommand{V: metaCommandVersion, Op: "split_begin", Shard: uint32(best)})
}

// maxShards bounds automatic splits (as Config.Shards bounds a new cluster's shard count).
const maxShards = 4096

// driveSplit, run by the meta leader each reconcile while a split is under way, takes its next step in the
// background (one at a time).
func (n *Node) driveSplit(st MetaState) {
	if !n.splitBusy.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer n.splitBusy.Store(false)
		n.advanceSplit(st)
	}()
}

func (n *Node) advanceSplit(st MetaState) {
	sp := *st.Split
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reports := n.gatherReports(ctx, sortedKeys(st.Nodes), n.memberStates())
	views := viewsFrom(st, reports)
	keep := st.Ranges[sp.Parent]
	if !leaderOwns(reports, sp.Parent, keep) {
		if !views[sp.Parent].converged(st.Placement[sp.Parent]) {
			return // a membership change is finishing: the child's voters must be exactly the parent's
		}
		cmd, err := storage.EncodeSplit(storage.SplitPayload{Child: sp.Child, Buckets: uint32(st.Buckets), Keep: keep,
			Give: st.Ranges[sp.Child], Voters: sortedCopy(st.Placement[sp.Parent])})
		if err == nil {
			_, err = n.Propose(ctx, sp.Parent, cmd)
		}
		if err != nil {
			n.metrics.splits.WithLabelValues("failed").Inc()
			n.log.Warn("split: proposing to the parent failed; retrying", "parent", sp.Parent, "child", sp.Child, "err", err)
			return
		}
		n.metrics.splits.WithLabelValues("proposed").Inc()
		n.log.Info("split: the parent applied the split", "parent", sp.Parent, "child", sp.Child)
		return
	}
	if views[sp.Child].leader == "" {
		return // the child's group is forming
	}
	n.proposeMeta(metaCommand{V: metaCommandVersion, Op: "split_done", Shard: sp.Child})
	n.metrics.splits.WithLabelValues("done").Inc()
	n.log.Info("split: done", "parent", sp.Parent, "child", sp.Child, "leader", views[sp.Child].leader)
}

// leaderOwns reports whether shard's leader reports owning exactly r (it applied the split that left it r).
func leaderOwns(reports map[string][]ReplicaReport, shard uint32, r shardmap.Range) bool {
	for _, reps := range reports {
		for _, rr := range reps {
			if rr.Shard == shard && rr.State == "Leader" {
				return rr.Range != nil && *rr.Range == r
			}
		}
	}
	return false
}

// awaitsSplit reports whether a local replica still owns part of shard's range: it has yet to apply the
// split that gives the range to shard, and that split writes shard's first state on this node, so shard must
// not start here before.
func (n *Node) awaitsSplit(st MetaState, shard uint32) bool {
	if int(shard) >= len(st.Ranges) {
		return false
	}
	want := st.Ranges[shard]
	for _, p := range n.LocalShards() {
		r, ok := n.Replica(p)
		if !ok || p == shard {
			continue
		}
		have := shardmap.Whole(p)
		if o := r.FSM.Owned(); o != nil {
			have = o.Range
		}
		if have.Bucket == want.Bucket && have.First <= want.First && want.First <= have.Last {
			return true
		}
	}
	return false
}

// bornHere is called when a split entry wrote a child's first state on this node. A parent replica added after
// the split replays the entry from its leader's log, long after the child formed elsewhere: if the node does not
// hold the child and the map, which knows the finished split, places it elsewhere, that state is dropped.
func (n *Node) bornHere(child uint32) {
	n.startMu.Lock()
	defer n.startMu.Unlock()
	st := n.meta.State()
	if int(child) >= len(st.Placement) || (st.Split != nil && st.Split.Child == child) ||
		slices.Contains(st.Placement[child], n.cfg.NodeID) {
		return // the split is under way or unknown here yet, or the child is placed here: it starts from it
	}
	if _, ok := n.Replica(child); ok {
		return
	}
	if err := n.db.DropShard(child); err != nil {
		n.log.Warn("drop the state a replayed split wrote", "shard", child, "err", err)
		return
	}
	n.log.Info("split replayed by a new parent replica: the child's state it wrote is dropped (placed elsewhere)", "shard", child)
}

// prepareBorn gives a shard born by a split on this node its first raft state: a snapshot at (1, 1) whose
// configuration is the birth record's voters, so the group starts where the split left its state machine.
// It does nothing for a shard with raft state or whose state machine is past index 1.
func (n *Node) prepareBorn(shard uint32, fsm *storage.ShardFSM) error {
	voters, err := n.db.Birth(shard)
	if err != nil || voters == nil || fsm.AppliedIndex() != 1 {
		return err
	}
	store, err := raftstore.New(n.db.Pebble(), storage.RaftPrefix(shard), raftstore.Options{})
	if err != nil {
		return err
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(n.snapshotDir(shard), 2, hclogFor(n.log, "raft-born"))
	if err != nil {
		return err
	}
	if has, err := raft.HasExistingState(store, store, snaps); err != nil || has {
		return err
	}
	st := n.meta.State()
	var conf raft.Configuration
	for _, id := range voters {
		info, ok := st.Nodes[id]
		if !ok {
			return fmt.Errorf("born shard %d: no address for voter %q yet", shard, id)
		}
		conf.Servers = append(conf.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(id), Address: raft.ServerAddress(info.RaftAddr)})
	}
	// The store encodes the peers in raft's legacy form through a transport; an in-memory one encodes them as
	// the network transport does (the address's bytes).
	_, enc := raft.NewInmemTransport("")
	defer enc.Close()
	sink, err := snaps.Create(raft.SnapshotVersionMax, 1, 1, conf, 1, enc)
	if err != nil {
		return err
	}
	snap, err := fsm.Snapshot()
	if err != nil {
		sink.Cancel()
		return err
	}
	defer snap.Release()
	if err := snap.Persist(sink); err != nil {
		return err
	}
	n.log.Info("shard born from a split: raft starts from its state at (1, 1)", "shard", shard, "voters", voters)
	return nil
}
