package cluster

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/raftstore"
	"github.com/memcluster/memcluster/storage"
)

type raftGroup struct {
	raft     *raft.Raft
	trans    raftTransport
	wait     *peerWaitTransport
	hasState bool
	guard    *voteGuard
}

// shutdownRaft stops a group's raft, first ending the RPCs that wait for a peer (raft's Shutdown waits for them).
func shutdownRaft(r *raft.Raft, wait *peerWaitTransport) raft.Future {
	wait.stopWaiting()
	return r.Shutdown()
}

// stopGroup stops a group's raft. Its Shutdown waits for every replication goroutine, and one blocked in an RPC to
// an unresponsive peer would hold it for good: after a grace period the transport's connections are closed, which
// fails such RPCs, and a goroutine dump is logged if even that does not end it.
func stopGroup(r *raft.Raft, wait *peerWaitTransport, trans raftTransport, log *slog.Logger) error {
	f := shutdownRaft(r, wait)
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
	}
	log.Warn("raft shutdown is slow: closing the group's connections")
	trans.CloseStreams()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
	}
	var dump strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&dump, 1)
	log.Error("raft shutdown still blocked after 35s", "goroutines", dump.String())
	return <-done
}

// raftRPCTimeout bounds one Raft RPC (and a coalesced heartbeat's wait for its reply): then it fails and raft
// backs off.
const raftRPCTimeout = 10 * time.Second

func (n *Node) snapshotDir(group uint32) string { return SnapshotDir(n.cfg.DataDir, group) }

// SnapshotDir is where a node with data directory dataDir keeps the raft snapshots of group.
func SnapshotDir(dataDir string, group uint32) string {
	name := fmt.Sprintf("shard-%d", group)
	if group == MetaGroup {
		name = "meta"
	}
	return filepath.Join(dataDir, "raft", name)
}

// openRaft starts a raft group over the shared Pebble DB (log and stable store) and the shared TCP port.
func (n *Node) openRaft(group uint32, fsm raft.FSM, restoreOnStart bool, notify chan bool) (*raftGroup, error) {
	store, err := raftstore.New(n.db.Pebble(), storage.RaftPrefix(group), raftstore.Options{Syncs: n.db.SyncedWrites()})
	if err != nil {
		return nil, fmt.Errorf("raft store of group %d: %w", group, err)
	}
	name := fmt.Sprintf("raft-%d", group)
	if group == MetaGroup {
		name = "raft-meta"
	}
	hl := hclogFor(n.log, name)
	fileSnaps, err := raft.NewFileSnapshotStoreWithLogger(n.snapshotDir(group), 2, hl)
	if err != nil {
		return nil, fmt.Errorf("snapshot store of group %d: %w", group, err)
	}
	var snaps raft.SnapshotStore = fileSnaps
	if sf, ok := fsm.(*storage.ShardFSM); ok {
		ls := newLazySnapshots(fileSnaps, n.snapshotDir(group), n.db, sf)
		ls.materialized = func(id string, size int64, took time.Duration) {
			n.metrics.snapshotsMaterialized.Inc()
			n.metrics.snapshotMaterializedBytes.Add(float64(size))
			n.log.Info("snapshot materialized to send", "shard", group, "snapshot", id, "bytes", size, "took", took)
		}
		snaps = ls
	}
	has, err := raft.HasExistingState(store, store, snaps)
	if err != nil {
		return nil, fmt.Errorf("raft state of group %d: %w", group, err)
	}
	// MaxRPCsInFlight 1 turns off pipelined replication. With the default (2) a follower that answers an
	// AppendEntries with Success=false can leave the leader's pipeline goroutines parked on each other: the
	// follower keeps getting heartbeats but never another entry, and raft's Shutdown waits forever for the
	// stuck replicator. Chaos seeds 9004 and 9018 met a replica whose drop never finished while its old leader
	// goroutines kept heartbeating, which fits this deadlock as grafana/pyroscope#5518 traces it.
	// raft's own measurements (hashicorp/raft#541) show pipelining buys little with batching.
	nt := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: n.mux.layer(group), MaxPool: 4, Timeout: raftRPCTimeout, Logger: hl, MaxRPCsInFlight: 1,
	})
	var trans raftTransport = nt
	// The meta group is one group among a node's hundreds: its heartbeats stay on its own connection.
	if n.hb != nil && group != MetaGroup {
		trans = newCoalescingTransport(nt, n.hb, group)
	}
	c := raft.DefaultConfig()
	c.LocalID = raft.ServerID(n.cfg.NodeID)
	c.HeartbeatTimeout = n.cfg.HeartbeatTimeout
	c.ElectionTimeout = n.cfg.ElectionTimeout
	c.LeaderLeaseTimeout = n.cfg.LeaderLeaseTimeout
	c.CommitTimeout = n.cfg.CommitTimeout
	if group != MetaGroup {
		c.CommitTimeout = n.cfg.ShardCommitTimeout
	}
	c.SnapshotThreshold = n.cfg.SnapshotThreshold
	if group != MetaGroup {
		// Lazy snapshots cost a WAL sync and a small file: take them often, so that a restart reads little of
		// the log (hashicorp/raft reads every entry after the last snapshot twice at start).
		c.SnapshotInterval = n.cfg.ShardSnapshotInterval
		c.TrailingLogs = n.cfg.ShardTrailingLogs
	}
	c.BatchApplyCh = true
	c.MaxAppendEntries = 256
	c.NoSnapshotRestoreOnStart = !restoreOnStart
	c.NotifyCh = notify
	c.Logger = hl
	c.NoLegacyTelemetry = true
	wait := newPeerWait(trans)
	guard := newVoteGuard(wait, n.log.With("group", name))
	if group != MetaGroup {
		if dropped, held := n.droppedMark(group); dropped {
			n.log.Info("replica placed again where one was dropped: no votes or elections until its log reaches what that one held",
				"shard", group, "held", held)
			guard.dropped.Store(true)
			guard.held.Store(held)
			guard.onConfigured = func() { n.clearDropped(group) }
		}
	}
	c.MayCampaign = guard.mayCampaign
	logs := raftstore.NewCache(store, raftstore.CacheEntries, raftstore.CacheBytes)
	r, err := raft.NewRaft(c, fsm, logs, store, snaps, guard)
	if err != nil {
		guard.Close()
		return nil, fmt.Errorf("start raft group %d: %w", group, err)
	}
	guard.raft.Store(r)
	if ct, ok := trans.(*coalescingTransport); ok {
		ct.raft.Store(r)
	}
	return &raftGroup{raft: r, trans: trans, wait: wait, hasState: has, guard: guard}, nil
}

// bootstrap forms a group with the given voters; every voter calls it with the same list.
func (n *Node) bootstrap(g *raftGroup, voters []string, addrs map[string]string) error {
	var servers []raft.Server
	for _, id := range voters {
		servers = append(servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(id), Address: raft.ServerAddress(addrs[id])})
	}
	err := g.raft.BootstrapCluster(raft.Configuration{Servers: servers}).Error()
	if err != nil && err != raft.ErrCantBootstrap {
		return err
	}
	return nil
}

func (n *Node) removeSnapshots(group uint32) error {
	return os.RemoveAll(n.snapshotDir(group))
}
