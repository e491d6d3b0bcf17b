package cluster

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/raftstore"
)

// heldStore is a node's log store whose next StoreLogs of a command can be held until released, or failed.
type heldStore struct {
	*raft.InmemStore

	mu      sync.Mutex
	hold    chan struct{} // non-nil: the next command write waits for it to close
	fail    error         // the held write's answer
	holding chan struct{} // closed once a write is being held
}

func (s *heldStore) StoreLogs(logs []*raft.Log) error {
	s.mu.Lock()
	hold, fail, holding := s.hold, s.fail, s.holding
	isCmd := len(logs) > 0 && logs[0].Type == raft.LogCommand
	if hold != nil && isCmd {
		s.hold = nil
	}
	s.mu.Unlock()
	if hold != nil && isCmd {
		close(holding)
		<-hold
		if fail != nil {
			return fail
		}
	}
	return s.InmemStore.StoreLogs(logs)
}

// holdNext holds the next command write; call release to let it go on (with fail as its answer). A test that
// fails first releases it as it ends, so that raft's shutdown does not wait for the held write.
func (s *heldStore) holdNext(t *testing.T, fail error) (release func(), holding chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hold := make(chan struct{})
	s.hold, s.fail, s.holding = hold, fail, make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	return release, s.holding
}

type stageNode struct {
	raft  *raft.Raft
	store *heldStore
	fsm   *countingFSM
}

type countingFSM struct {
	mu sync.Mutex
	n  int
}

func (f *countingFSM) Apply(*raft.Log) any { f.mu.Lock(); f.n++; f.mu.Unlock(); return nil }
func (f *countingFSM) count() int          { f.mu.Lock(); defer f.mu.Unlock(); return f.n }
func (f *countingFSM) Snapshot() (raft.FSMSnapshot, error) {
	return nil, errors.New("no snapshots in this test")
}
func (f *countingFSM) Restore(io.ReadCloser) error { return nil }

// inmemNetwork connects n raft in-memory transports to each other, and names them as voters.
func inmemNetwork(n int) ([]*raft.InmemTransport, []raft.Server) {
	var trans []*raft.InmemTransport
	var servers []raft.Server
	for i := range n {
		id := raft.ServerID(fmt.Sprintf("n%d", i))
		_, tr := raft.NewInmemTransport(raft.ServerAddress(id))
		trans = append(trans, tr)
		servers = append(servers, raft.Server{ID: id, Address: tr.LocalAddr()})
	}
	for i, a := range trans {
		for j, b := range trans {
			if i != j {
				a.Connect(b.LocalAddr(), b)
			}
		}
	}
	return trans, servers
}

// stageCluster starts three raft nodes over in-memory stores and transport, each store behind a raftstore.Cache as
// openRaft puts it.
func stageCluster(t *testing.T) []*stageNode {
	t.Helper()
	var nodes []*stageNode
	trans, servers := inmemNetwork(3)
	for i := range 3 {
		c := raft.DefaultConfig()
		c.LocalID = servers[i].ID
		c.Logger = hclog.NewNullLogger()
		c.HeartbeatTimeout, c.ElectionTimeout, c.LeaderLeaseTimeout = 300*time.Millisecond, 300*time.Millisecond, 300*time.Millisecond
		nd := &stageNode{store: &heldStore{InmemStore: raft.NewInmemStore()}, fsm: &countingFSM{}}
		r, err := raft.NewRaft(c, nd.fsm, raftstore.NewCache(nd.store, raftstore.CacheEntries, raftstore.CacheBytes), nd.store,
			raft.NewInmemSnapshotStore(), trans[i])
		if err != nil {
			t.Fatal(err)
		}
		nd.raft = r
		nodes = append(nodes, nd)
		t.Cleanup(func() { r.Shutdown().Error() }) // after the holds' releases: cleanups run last first
	}
	if err := nodes[0].raft.BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil {
		t.Fatal(err)
	}
	return nodes
}

func stageLeader(t *testing.T, nodes []*stageNode) (leader *stageNode, followers []*stageNode) {
	t.Helper()
	waitFor(t, 10*time.Second, "a leader", func() bool {
		leader, followers = nil, nil
		for _, nd := range nodes {
			if nd.raft.State() == raft.Leader {
				leader = nd
			} else {
				followers = append(followers, nd)
			}
		}
		return leader != nil
	})
	return leader, followers
}

// applyOnLeader applies cmd on the node that leads, and again on the next one while the node it found is no
// longer the leader when the apply reaches it: after a leader's failed write, the node that still reports
// leading may be stepping down (the apply is then refused before it is stored, ErrNotLeader, so it is applied
// once).
func applyOnLeader(t *testing.T, nodes []*stageNode, cmd []byte) *stageNode {
	t.Helper()
	var err error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		leader, _ := stageLeader(t, nodes)
		if err = leader.raft.Apply(cmd, 10*time.Second).Error(); err == nil {
			return leader
		}
		if !errors.Is(err, raft.ErrNotLeader) {
			t.Fatalf("apply on the leader %s: %v", leader.raft.String(), err)
		}
	}
	t.Fatalf("no leader took the apply: %v", err)
	return nil
}

func lastStored(nd *stageNode) uint64 {
	last, _ := nd.store.InmemStore.LastIndex()
	return last
}

// TestLeaderWritesItsLogBesideItsFollowers holds the leader's own write of an entry: its followers still
// receive and store the entry meanwhile, and the write is acknowledged once the leader's write returns.
func TestLeaderWritesItsLogBesideItsFollowers(t *testing.T) {
	nodes := stageCluster(t)
	leader, followers := stageLeader(t, nodes)
	release, holding := leader.store.holdNext(t, nil)
	want := lastStored(leader) + 1
	f := leader.raft.Apply([]byte("x"), 10*time.Second)
	<-holding
	waitFor(t, 10*time.Second, "the followers to store the entry the leader is still writing", func() bool {
		return lastStored(followers[0]) >= want && lastStored(followers[1]) >= want
	})
	if lastStored(leader) >= want {
		t.Fatal("the leader's held write is in its store")
	}
	release()
	if err := f.Error(); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if f.Index() != want {
		t.Fatalf("applied at %d, want %d", f.Index(), want)
	}
}

// TestLeaderWriteFailureAfterItsFollowersStored fails the leader's own write of an entry its followers have:
// the write answers with the error, the leader steps down, and the group goes on with a new leader, every
// node applying the same commands.
func TestLeaderWriteFailureAfterItsFollowersStored(t *testing.T) {
	nodes := stageCluster(t)
	leader, followers := stageLeader(t, nodes)
	release, holding := leader.store.holdNext(t, errors.New("disk gone"))
	want := lastStored(leader) + 1
	f := leader.raft.Apply([]byte("x"), 10*time.Second)
	<-holding
	waitFor(t, 10*time.Second, "the followers to store the entry", func() bool {
		return lastStored(followers[0]) >= want && lastStored(followers[1]) >= want
	})
	release()
	if err := f.Error(); err == nil {
		t.Fatal("the apply whose leader write failed succeeded")
	}
	next := applyOnLeader(t, nodes, []byte("y"))
	target := next.raft.AppliedIndex()
	waitFor(t, 10*time.Second, "every node to apply the new leader's entries", func() bool {
		for _, nd := range nodes {
			if nd.raft.AppliedIndex() < target {
				return false
			}
		}
		return true
	})
	// The held entry was committed by the new leader or replaced: either way every node applied the same count.
	counts := map[int]bool{}
	for _, nd := range nodes {
		counts[nd.fsm.count()] = true
	}
	if len(counts) != 1 || (!counts[1] && !counts[2]) {
		t.Fatalf("nodes applied different command counts: %v", counts)
	}
}
