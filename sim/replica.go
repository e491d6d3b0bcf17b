package sim

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/raftstore"
	"github.com/memcluster/memcluster/storage"
)

// shardID is the shard every replica serves; not 0, so a key built without the shard prefix would show.
const shardID = 7

// replica is one node's copy of the shard: a real Pebble DB (in memory), the real ShardFSM and raft log store, and
// hashicorp/raft over the simulated transport.
type replica struct {
	id    int
	db    *storage.DB
	fsm   *storage.ShardFSM
	store *raftstore.Store
	logs  *faultyLogs // the store as raft's log store, whose writes a disk fault can refuse
	snaps raft.SnapshotStore
	trans *transport
	raft  *raft.Raft
	halt  chan error
}

func serverID(i int) raft.ServerID { return raft.ServerID(fmt.Sprintf("n%d", i)) }

// raftConfig is tuned for speed: 50ms timeouts make an election take tens of milliseconds, and a low snapshot
// threshold with few trailing logs makes lagging followers catch up by InstallSnapshot within one schedule.
func raftConfig(i int, log *slog.Logger) *raft.Config {
	c := raft.DefaultConfig()
	c.LocalID = serverID(i)
	c.HeartbeatTimeout = 50 * time.Millisecond
	c.ElectionTimeout = 50 * time.Millisecond
	c.LeaderLeaseTimeout = 50 * time.Millisecond
	c.CommitTimeout = 5 * time.Millisecond
	c.SnapshotInterval = 30 * time.Millisecond
	c.SnapshotThreshold = 24
	c.TrailingLogs = 8
	c.MaxAppendEntries = 16
	c.BatchApplyCh = true
	c.NoLegacyTelemetry = true
	c.Logger = hclogFor(log, c.LocalID)
	return c
}

func hclogFor(log *slog.Logger, id raft.ServerID) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: string(id), Level: hclog.Error,
		Output: slogWriter{log.With("node", id)}, DisableTime: true})
}

// wrapFSM lets a planted bug stand between raft and the real state machine.
type wrapFSM func(i int, f *storage.ShardFSM) raft.FSM

// openReplica opens replica i. Snapshots go to raft's FileSnapshotStore under dir, as in production: raft's
// InmemSnapshotStore publishes a snapshot before it is written, so a leader can send a truncated one (a data
// race the race detector reports), which would test the store instead of the system.
func openReplica(i int, net *Network, log *slog.Logger, dir string) (*replica, error) {
	snaps, err := raft.NewFileSnapshotStoreWithLogger(filepath.Join(dir, string(serverID(i))), 2, hclogFor(log, serverID(i)))
	if err != nil {
		return nil, fmt.Errorf("snapshot store of replica %d: %w", i, err)
	}
	db, err := storage.Open("db", storage.Options{FS: vfs.NewMem(), CacheSize: 1 << 20, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("open replica %d: %w", i, err)
	}
	r := &replica{id: i, db: db, snaps: snaps, halt: make(chan error, 1)}
	r.fsm, err = storage.NewShardFSM(db, shardID, nil, log, r.onHalt)
	if err != nil {
		db.Close()
		return nil, err
	}
	if r.store, err = raftstore.New(db.Pebble(), storage.RaftPrefix(shardID), raftstore.Options{}); err != nil {
		db.Close()
		return nil, fmt.Errorf("raft store of replica %d: %w", i, err)
	}
	r.logs = &faultyLogs{LogStore: r.store}
	r.trans = newTransport(net, i, raft.ServerAddress(serverID(i)))
	return r, nil
}

func (r *replica) logStore(forceMonotonic bool) raft.LogStore {
	var s raft.LogStore = r.logs
	if forceMonotonic {
		s = monotonicLogStore{r.logs}
	}
	// As cluster/raftgroup.go opens a group: the cache also stages a leader's new entries while it writes them.
	return raftstore.NewCache(s, raftstore.CacheEntries, raftstore.CacheBytes)
}

// bootstrap writes the n-voter configuration into the replica's stores. Every replica is bootstrapped before any
// raft starts, so a fast pair cannot replicate to a third that has not bootstrapped yet.
func (r *replica) bootstrap(n int, forceMonotonic bool) error {
	var servers []raft.Server
	for j := 0; j < n; j++ {
		servers = append(servers, raft.Server{Suffrage: raft.Voter, ID: serverID(j), Address: raft.ServerAddress(serverID(j))})
	}
	conf := raftConfig(r.id, slog.New(slog.DiscardHandler))
	err := raft.BootstrapCluster(conf, r.logStore(forceMonotonic), r.store, r.snaps, r.trans, raft.Configuration{Servers: servers})
	if err != nil {
		return fmt.Errorf("bootstrap replica %d: %w", r.id, err)
	}
	return nil
}

func (r *replica) start(log *slog.Logger, wrap wrapFSM, forceMonotonic bool) error {
	var fsm raft.FSM = r.fsm
	if wrap != nil {
		fsm = wrap(r.id, r.fsm)
	}
	ra, err := raft.NewRaft(raftConfig(r.id, log), fsm, r.logStore(forceMonotonic), r.store, r.snaps, r.trans)
	if err != nil {
		return fmt.Errorf("start raft of replica %d: %w", r.id, err)
	}
	r.raft = ra
	return nil
}

// monotonicLogStore declares the store monotonic, as raftstore did before hashicorp/raft#697 was found: raft
// then wipes the log after a snapshot install (the path that panics).
type monotonicLogStore struct{ raft.LogStore }

func (monotonicLogStore) IsMonotonic() bool { return true }

func (r *replica) onHalt(err error) {
	select {
	case r.halt <- err:
	default:
	}
}

func (r *replica) isLeader() bool { return r.raft.State() == raft.Leader }

// readIndex mirrors cluster.Replica.ReadBarrier: a barrier in the current term (so the commit index covers every
// write acknowledged under earlier leaders), then the commit index, a quorum check of leadership, and waiting for
// the state machine to apply up to that index. A read of the local DB after it is linearizable.
func (r *replica) readIndex(ctx context.Context) error {
	if !r.isLeader() {
		return raft.ErrNotLeader
	}
	if err := wait(ctx, r.raft.Barrier(futureTimeout)); err != nil {
		return err
	}
	idx := r.raft.CommitIndex()
	if err := wait(ctx, r.raft.VerifyLeader()); err != nil {
		return err
	}
	for r.raft.AppliedIndex() < idx {
		if err := sleepCtx(ctx, time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

// futureTimeout bounds the wait for one raft future; past it the outcome is unknown to the client.
const futureTimeout = time.Second

// wait waits for f without trusting it to resolve: a future stuck past futureTimeout is reported as a timeout.
func wait(ctx context.Context, f raft.Future) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	t := time.NewTimer(futureTimeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return errFutureTimeout
	case <-ctx.Done():
		return ctx.Err()
	}
}

var errFutureTimeout = fmt.Errorf("raft future timed out after %v", futureTimeout)

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// slogWriter carries raft's hclog lines into the run's slog logger.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	w.l.Error(strings.TrimSpace(string(p)), "component", "raft")
	return len(p), nil
}

var _ io.Writer = slogWriter{}
