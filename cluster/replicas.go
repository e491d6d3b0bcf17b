package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/memcluster/memcluster/storage"
)

// holdPersistedReplicas records the replicas this node held before it stopped; restartHeld starts or drops
// them once the meta state is current (restart.go).
func (n *Node) holdPersistedReplicas() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, s := range n.persistedReplicas() {
		n.held[s] = true
	}
}

func (n *Node) persistedReplicas() []uint32 {
	b, _ := n.db.GetNode("replicas")
	var out []uint32
	_ = json.Unmarshal(b, &out)
	return out
}

// persistReplicas writes the list of replicas this node holds, durably, when it changed since the last write
// (a restart starts a dozen held replicas in a row, each a synced write of the same list otherwise).
func (n *Node) persistReplicas() {
	n.persistMu.Lock()
	defer n.persistMu.Unlock()
	b, _ := json.Marshal(n.heldShards())
	if bytes.Equal(b, n.persisted) {
		return
	}
	if err := n.db.SetNode("replicas", b); err != nil {
		n.log.Error("persist replica list", "err", err)
		return
	}
	n.persisted = b
}

// startReplica opens shard's replica. With voters set it also bootstraps the group (cluster formation).
func (n *Node) startReplica(shard uint32, voters []string, addrs map[string]string) (*Replica, error) {
	return n.start(shard, voters, addrs, false)
}

// startHeld starts a replica this node held before its restart, its indexes loading behind its group
// (loading.go).
func (n *Node) startHeld(shard uint32) (*Replica, error) { return n.start(shard, nil, nil, true) }

func (n *Node) start(shard uint32, voters []string, addrs map[string]string, behind bool) (*Replica, error) {
	n.startMu.Lock()
	defer n.startMu.Unlock()
	n.mu.Lock()
	if r, ok := n.replicas[shard]; ok {
		n.mu.Unlock()
		return r, nil
	}
	n.mu.Unlock()
	// An interrupted snapshot restore left partial state, or one never began: let raft restore its latest snapshot.
	restoring, err := n.mustRestore(shard)
	if err != nil {
		return nil, err
	}
	r := &Replica{Shard: shard, log: n.log.With("shard", shard), notify: make(chan bool, 8), stop: make(chan struct{})}
	// A restore at start goes through the indexes (Reset) before the group runs: they open first then.
	var loading *loadingIndex
	switch {
	case n.newIdx == nil:
	case behind && !restoring:
		loading = newLoadingIndex()
		r.Index = loading
	default:
		if r.Index, err = n.newIdx(shard); err != nil {
			return nil, fmt.Errorf("open indexes of shard %d: %w", shard, err)
		}
	}
	abandon := func() {
		if loading != nil {
			loading.finish(nil, ErrStopped)
		}
		if r.Index != nil {
			r.Index.Close()
		}
	}
	var ixr storage.Indexer
	if r.Index != nil {
		ixr = r.Index
	}
	fsm, err := storage.NewShardFSM(n.db, shard, ixr, n.log, func(err error) { go n.haltReplica(shard, err) })
	if err != nil {
		abandon()
		return nil, err
	}
	r.FSM = fsm
	fsm.SetOnBorn(func(child uint32) { go n.bornHere(child) })
	if err := n.prepareBorn(shard, fsm); err != nil {
		abandon()
		return nil, fmt.Errorf("start shard %d born by a split: %w", shard, err)
	}
	g, err := n.openRaft(shard, fsm, restoring, r.notify)
	if err != nil {
		abandon()
		return nil, err
	}
	r.raft, r.trans, r.wait = g.raft, g.trans, g.wait
	if voters != nil && !g.hasState {
		if err := n.bootstrap(g, voters, addrs); err != nil {
			if loading != nil {
				loading.finish(nil, ErrStopped)
			}
			r.Shutdown()
			return nil, fmt.Errorf("bootstrap shard %d: %w", shard, err)
		}
	}
	r.wg.Add(1)
	go r.watchLeadership()
	if g.guard.dropped.Load() && g.guard.held.Load() > 0 {
		r.wg.Add(1)
		go n.advancePastDropped(r, g.guard)
	}
	n.mu.Lock()
	n.replicas[shard] = r
	n.mu.Unlock()
	n.persistReplicas()
	if loading != nil {
		go n.loadBehind(r, loading)
	}
	n.log.Info("replica started", "shard", shard, "existing_state", g.hasState, "indexes_loading", loading != nil)
	return r, nil
}

// WriteHealth reports whether this node's disk takes writes: nil, or an error wrapping storage.ErrReadOnly
// that names the problem. The API refuses writes meanwhile; replicas keep applying what raft commits.
func (n *Node) WriteHealth() error { return n.db.WriteHealth() }

// WaitWritable holds a write while this node's storage is overloaded, up to Config.OverloadWait; then it
// returns an error wrapping storage.ErrOverloaded (storage.DB.WaitWritable).
func (n *Node) WaitWritable(ctx context.Context) error {
	return n.db.WaitWritable(ctx, n.cfg.OverloadWait)
}

// haltReplica stops a replica whose state machine met an undecodable entry; it stays listed so status shows it.
func (n *Node) haltReplica(shard uint32, err error) {
	n.log.Error("stopping replica", "shard", shard, "err", err)
	n.metrics.halted.Inc()
	if r, ok := n.Replica(shard); ok {
		_ = shutdownRaft(r.raft, r.wait).Error()
	}
}

// dropReplica stops a replica that moved away and deletes its data.
func (n *Node) dropReplica(shard uint32) {
	n.mu.Lock()
	r := n.replicas[shard]
	delete(n.replicas, shard)
	delete(n.outSince, shard)
	n.mu.Unlock()
	if r == nil {
		return
	}
	if err := r.Shutdown(); err != nil {
		n.log.Warn("shutdown moved replica", "shard", shard, "err", err)
	}
	if err := n.markDropped(shard); err != nil {
		n.log.Error("keep the data of a moved replica", "shard", shard, "err", err)
		n.persistReplicas()
		return
	}
	if err := n.db.DropShard(shard); err != nil {
		n.log.Error("drop shard data", "shard", shard, "err", err)
	}
	_ = n.removeSnapshots(shard)
	n.persistReplicas()
	n.log.Info("replica moved away and dropped", "shard", shard)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
