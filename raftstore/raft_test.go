package raftstore

import (
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// countFSM counts applied commands; its snapshot is the count, so a node
// restored from snapshot + log replay must land on the leader's count.
type countFSM struct {
	mu sync.Mutex
	n  uint64
}

func (f *countFSM) Apply(*raft.Log) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	return f.n
}

func (f *countFSM) count() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

func (f *countFSM) Snapshot() (raft.FSMSnapshot, error) { return countSnap(f.count()), nil }

func (f *countFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	var b [8]byte
	if _, err := io.ReadFull(rc, b[:]); err != nil {
		return err
	}
	f.mu.Lock()
	f.n = binary.BigEndian.Uint64(b[:])
	f.mu.Unlock()
	return nil
}

type countSnap uint64

func (s countSnap) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(binary.BigEndian.AppendUint64(nil, uint64(s))); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (countSnap) Release() {}

// raftNode is one member of a test cluster with everything it needs to be
// stopped and restarted from disk.
type raftNode struct {
	id    raft.ServerID
	dir   string
	raft  *raft.Raft
	fsm   *countFSM
	trans *raft.InmemTransport
	store logStableStore
	close func()
}

type raftCluster struct {
	tb    testing.TB
	b     backend
	conf  func(id raft.ServerID) *raft.Config
	nodes []*raftNode
}

func testRaftConfig(id raft.ServerID) *raft.Config {
	c := raft.DefaultConfig()
	c.LocalID = id
	c.Logger = hclog.NewNullLogger()
	// Generous timeouts: the race detector on a shared 2-core machine must
	// not cause spurious elections.
	c.HeartbeatTimeout = 300 * time.Millisecond
	c.ElectionTimeout = 300 * time.Millisecond
	c.LeaderLeaseTimeout = 300 * time.Millisecond
	c.CommitTimeout = 5 * time.Millisecond
	return c
}

func newRaftCluster(tb testing.TB, b backend, n int, conf func(raft.ServerID) *raft.Config) *raftCluster {
	tb.Helper()
	c := &raftCluster{tb: tb, b: b, conf: conf}
	var servers []raft.Server
	for i := range n {
		id := raft.ServerID(fmt.Sprintf("node-%d", i))
		c.nodes = append(c.nodes, &raftNode{id: id, dir: tb.TempDir()})
		servers = append(servers, raft.Server{ID: id, Address: raft.ServerAddress(id)})
	}
	for _, nd := range c.nodes {
		c.start(nd)
	}
	if err := c.nodes[0].raft.BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil {
		tb.Fatalf("bootstrap: %v", err)
	}
	tb.Cleanup(c.shutdown)
	return c
}

// start (re)opens a node's storage from its dir and joins it to the
// in-memory network under its fixed address.
func (c *raftCluster) start(nd *raftNode) {
	c.tb.Helper()
	nd.store, nd.close = openOne(c.tb, c.b, filepath.Join(nd.dir, "log"))
	snaps, err := raft.NewFileSnapshotStore(filepath.Join(nd.dir, "snap"), 2, io.Discard)
	if err != nil {
		c.tb.Fatalf("snapshot store: %v", err)
	}
	_, nd.trans = raft.NewInmemTransport(raft.ServerAddress(nd.id))
	for _, other := range c.nodes {
		if other != nd && other.trans != nil {
			other.trans.Connect(nd.trans.LocalAddr(), nd.trans)
			nd.trans.Connect(other.trans.LocalAddr(), other.trans)
		}
	}
	nd.fsm = &countFSM{}
	nd.raft, err = raft.NewRaft(c.conf(nd.id), nd.fsm, nd.store, nd.store, snaps, nd.trans)
	if err != nil {
		c.tb.Fatalf("new raft %s: %v", nd.id, err)
	}
}

// halt stops a node's raft but keeps its store open for inspection.
func (c *raftCluster) halt(nd *raftNode) {
	c.tb.Helper()
	if nd.raft == nil {
		return
	}
	if err := nd.raft.Shutdown().Error(); err != nil {
		c.tb.Errorf("shutdown %s: %v", nd.id, err)
	}
	for _, other := range c.nodes {
		if other.trans != nil {
			other.trans.Disconnect(nd.trans.LocalAddr())
		}
	}
	nd.raft = nil
}

func (c *raftCluster) stop(nd *raftNode) {
	c.tb.Helper()
	c.halt(nd)
	if nd.close != nil {
		nd.close()
		nd.close = nil
	}
}

func (c *raftCluster) shutdown() {
	for _, nd := range c.nodes {
		c.stop(nd)
	}
}

func (c *raftCluster) leader() *raftNode {
	c.tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, nd := range c.nodes {
			if nd.raft != nil && nd.raft.State() == raft.Leader {
				return nd
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.tb.Fatal("no leader within 10s")
	return nil
}

// apply pushes n commands through the leader with a window of in-flight
// futures, as a busy shard would, so raft batches them into StoreLogs.
func (c *raftCluster) apply(n, window int, data []byte) {
	c.tb.Helper()
	futures := make(chan raft.ApplyFuture, window)
	errc := make(chan error, 1)
	go func() {
		var first error
		for f := range futures {
			if err := f.Error(); err != nil && first == nil {
				first = err
			}
		}
		errc <- first
	}()
	r := c.leader().raft
	for range n {
		futures <- r.Apply(data, 5*time.Second)
	}
	close(futures)
	if err := <-errc; err != nil {
		c.tb.Fatalf("apply: %v", err)
	}
}

func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRaftClusterRestart runs a real 3-node raft group on each backend,
// restarts a follower from its store while the others make progress, and
// checks it catches up. Snapshots every 200 entries with 50 trailing logs
// make raft call DeleteRange on the stores as it would in production.
func TestRaftClusterRestart(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			conf := func(id raft.ServerID) *raft.Config {
				c := testRaftConfig(id)
				c.SnapshotThreshold = 200
				c.SnapshotInterval = 100 * time.Millisecond
				c.TrailingLogs = 50
				return c
			}
			c := newRaftCluster(t, b, 3, conf)
			c.apply(500, 64, []byte("x"))

			var follower *raftNode
			for _, nd := range c.nodes {
				if nd != c.leader() {
					follower = nd
					break
				}
			}
			c.stop(follower)
			c.apply(500, 64, []byte("y"))
			c.start(follower)
			// The restarted node must come back with its own log, not an
			// empty store that the leader happens to refill.
			if last, err := follower.store.LastIndex(); err != nil || last < 400 {
				t.Fatalf("restarted follower LastIndex = %d, %v; want its pre-restart log", last, err)
			}

			leader := c.leader()
			want := leader.fsm.count()
			if want < 1000 {
				t.Fatalf("leader applied %d commands, want >= 1000", want)
			}
			waitFor(t, "restarted follower to catch up", func() bool {
				return follower.fsm.count() == want && follower.raft.AppliedIndex() >= leader.raft.AppliedIndex()
			})
			applied := follower.raft.AppliedIndex()
			// Stop raft before reading the store: its snapshot goroutine
			// truncates the log concurrently.
			c.halt(follower)
			first, _ := follower.store.FirstIndex()
			last, _ := follower.store.LastIndex()
			// A follower that caught up by snapshot install may have an
			// empty log (monotonic stores clear it); otherwise both ends
			// must be readable.
			var l raft.Log
			for _, idx := range []uint64{first, last} {
				if err := follower.store.GetLog(idx, &l); last != 0 && err != nil {
					t.Fatalf("follower GetLog(%d) in [%d, %d]: %v", idx, first, last, err)
				}
			}
			t.Logf("follower log [%d, %d], applied %d, fsm %d", first, last, applied, want)
		})
	}
}
