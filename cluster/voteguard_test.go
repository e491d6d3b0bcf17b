package cluster

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/raftstore"
	"github.com/memcluster/memcluster/storage"
)

type nopFSM struct{}

func (nopFSM) Apply(*raft.Log) any                 { return nil }
func (nopFSM) Snapshot() (raft.FSMSnapshot, error) { return nil, nil }
func (nopFSM) Restore(rc io.ReadCloser) error      { return rc.Close() }

// guardedRaft is one raft instance behind a vote guard on a real TCP transport, with in-memory stores.
type guardedRaft struct {
	id    raft.ServerID
	tr    *raft.NetworkTransport
	guard *voteGuard
	r     *raft.Raft
}

func newGuardedRaft(t *testing.T, id string, dropped bool) *guardedRaft {
	t.Helper()
	tr, err := raft.NewTCPTransport("127.0.0.1:0", nil, 2, time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	g := &guardedRaft{id: raft.ServerID(id), tr: tr, guard: newVoteGuard(tr, slog.New(slog.DiscardHandler))}
	g.guard.dropped.Store(dropped)
	c := raft.DefaultConfig()
	c.LocalID = g.id
	c.Logger = hclogFor(slog.New(slog.DiscardHandler), "test")
	c.HeartbeatTimeout, c.ElectionTimeout, c.LeaderLeaseTimeout = 200*time.Millisecond, 200*time.Millisecond, 100*time.Millisecond
	c.MayCampaign = g.guard.mayCampaign
	store := raft.NewInmemStore()
	if g.r, err = raft.NewRaft(c, nopFSM{}, store, store, raft.NewInmemSnapshotStore(), g.guard); err != nil {
		t.Fatal(err)
	}
	g.guard.raft.Store(g.r)
	t.Cleanup(func() { _ = g.r.Shutdown().Error() })
	return g
}

// newClientTransport is a TCP transport to send raft RPCs from, closed when the test ends.
func newClientTransport(t *testing.T) *raft.NetworkTransport {
	t.Helper()
	client, err := raft.NewTCPTransport("127.0.0.1:0", nil, 2, time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

// askVote asks g for a vote over TCP as a candidate whose log is ahead of any empty replica's.
func askVote(t *testing.T, g *guardedRaft) *raft.RequestVoteResponse {
	t.Helper()
	client := newClientTransport(t)
	req := &raft.RequestVoteRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax,
		ID: []byte("stale"), Addr: []byte(client.LocalAddr())}, Term: 9, LastLogIndex: 5, LastLogTerm: 3}
	var resp raft.RequestVoteResponse
	if err := client.RequestVote(g.id, g.tr.LocalAddr(), req, &resp); err != nil {
		t.Fatal(err)
	}
	return &resp
}

// askTimeoutNow sends g a leader's TimeoutNow over TCP and returns the error it answers.
func askTimeoutNow(t *testing.T, g *guardedRaft) error {
	t.Helper()
	client := newClientTransport(t)
	req := &raft.TimeoutNowRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax,
		ID: []byte("leader"), Addr: []byte(client.LocalAddr())}}
	var resp raft.TimeoutNowResponse
	return client.TimeoutNow(g.id, g.tr.LocalAddr(), req, &resp)
}

// An empty replica on a node that dropped a replica of the group before grants no vote through the guard, over
// real TCP; once it has a configuration it votes as raft decides, and the marker is cleared.
func TestVoteGuardRefusesOnADroppedReplicaWithoutConfiguration(t *testing.T) {
	g := newGuardedRaft(t, "empty", true)
	cleared := make(chan struct{}, 1)
	g.guard.onConfigured = func() { cleared <- struct{}{} }
	if resp := askVote(t, g); resp.Granted {
		t.Fatal("an empty replica where one was dropped granted a vote")
	}
	if g.guard.count.Load() != 1 {
		t.Fatalf("refused %d votes, want 1", g.guard.count.Load())
	}
	// With a configuration that names the candidate, raft itself decides (and grants: the candidate's log is
	// ahead and no leader is known).
	boot := raft.Configuration{Servers: []raft.Server{{ID: "empty", Address: g.tr.LocalAddr()},
		{ID: "stale", Address: "127.0.0.1:1"}, {ID: "third", Address: "127.0.0.1:2"}}}
	if err := g.r.BootstrapCluster(boot).Error(); err != nil {
		t.Fatal(err)
	}
	if resp := askVote(t, g); !resp.Granted {
		t.Fatalf("a configured replica refused a vote raft would grant: %+v", resp)
	}
	select {
	case <-cleared:
	default:
		t.Fatal("the dropped marker was not cleared once the replica had a configuration")
	}
}

// An empty replica that never held the group here votes as raft decides: an initial voter that missed its
// bootstrap lets the surviving voter elect when the third voter is dead (before, the guard refused it, and
// such a group stayed without a leader for good).
func TestInitialVoterThatMissedBootstrapLetsSurvivorsElect(t *testing.T) {
	survivor := newGuardedRaft(t, "b", false)
	missed := newGuardedRaft(t, "c", false)
	conf := raft.Configuration{Servers: []raft.Server{
		{ID: "a", Address: "127.0.0.1:1"}, // dead: never started
		{ID: "b", Address: survivor.tr.LocalAddr()},
		{ID: "c", Address: missed.tr.LocalAddr()},
	}}
	if err := survivor.r.BootstrapCluster(conf).Error(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for survivor.r.State() != raft.Leader {
		if time.Now().After(deadline) {
			t.Fatalf("no leader after 20s: survivor is %v, refused votes %d", survivor.r.State(), missed.guard.count.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The leader brings the missed voter its configuration.
	for len(missed.r.GetConfiguration().Configuration().Servers) != 3 {
		if time.Now().After(deadline) {
			t.Fatal("the missed voter never learned the configuration")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A replica recreated where one was dropped may hold a configuration that names it a voter — a leader's snapshot
// older than its predecessor's removal — long before its log reaches what its predecessor held. Until then it
// neither campaigns nor votes (here the configuration makes it the only voter, so without the hold it would
// elect itself at once); once its log reaches that index, raft decides alone and the marker is cleared.
func TestDroppedReplicaWaitsForItsPredecessorsIndex(t *testing.T) {
	g := newGuardedRaft(t, "n1", true)
	g.guard.held.Store(50)
	cleared := make(chan struct{}, 1)
	g.guard.onConfigured = func() { cleared <- struct{}{} }
	boot := raft.Configuration{Servers: []raft.Server{{ID: "n1", Address: g.tr.LocalAddr()}}}
	if err := g.r.BootstrapCluster(boot).Error(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for g.guard.campaignsHeld.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("raft never asked whether the replica may campaign (state %v)", g.r.State())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st := g.r.State(); st != raft.Follower {
		t.Fatalf("a replica short of its predecessor's index is %v, want a follower", st)
	}
	if resp := askVote(t, g); resp.Granted {
		t.Fatal("a replica short of its predecessor's index granted a vote")
	}
	if err := askTimeoutNow(t, g); err == nil || !strings.Contains(err.Error(), "may not campaign") {
		t.Fatalf("a replica short of its predecessor's index answered a TimeoutNow with %v", err)
	}

	g.guard.held.Store(g.r.LastIndex()) // the log reaches what the predecessor held
	for g.r.State() != raft.Leader {
		if time.Now().After(deadline) {
			t.Fatalf("a caught-up replica did not elect itself: %v", g.r.State())
		}
		time.Sleep(20 * time.Millisecond)
	}
	refused := g.guard.count.Load()
	askVote(t, g) // raft answers it now, and the guard clears the marker on the way
	if g.guard.count.Load() != refused {
		t.Fatal("the guard refused a vote after the replica caught up")
	}
	select {
	case <-cleared:
	default:
		t.Fatal("the dropped marker was not cleared once the replica caught up")
	}
}

// The marker records the predecessor's last index; an older node's one-byte marker reads as unknown (0), which
// holds votes back only until the replica has a configuration, as that node did.
func TestDroppedMarkerRecordsTheHeldIndex(t *testing.T) {
	if got := droppedHeld(droppedValue(33483)); got != 33483 {
		t.Fatalf("held %d, want 33483", got)
	}
	if got := droppedHeld([]byte{droppedV1}); got != 0 {
		t.Fatalf("a one-byte marker reads as held %d, want 0", got)
	}
}

// A drop records the last index the replica held, and a second drop — a replica dropped again before it caught
// up, or a drop repeated after a crash over stores already emptied — never lowers it.
func TestMarkDroppedKeepsTheHighestIndex(t *testing.T) {
	db, err := storage.Open("db", storage.Options{FS: vfs.NewMem(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := &Node{db: db, cfg: Config{DataDir: t.TempDir()}, log: slog.New(slog.DiscardHandler)}
	const group = 7
	store, err := raftstore.New(db.Pebble(), storage.RaftPrefix(group), raftstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var logs []*raft.Log
	for i := uint64(1); i <= 40; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 1, Type: raft.LogNoop})
	}
	if err := store.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if dropped, _ := n.droppedMark(group); dropped {
		t.Fatal("a group never dropped reads as dropped")
	}
	if err := n.markDropped(group); err != nil {
		t.Fatal(err)
	}
	if dropped, held := n.droppedMark(group); !dropped || held != 40 {
		t.Fatalf("after the drop: dropped %v, held %d; want true, 40", dropped, held)
	}
	if err := db.DropShard(group); err != nil {
		t.Fatal(err)
	}
	if err := n.markDropped(group); err != nil {
		t.Fatal(err)
	}
	if dropped, held := n.droppedMark(group); !dropped || held != 40 {
		t.Fatalf("after a second drop over emptied stores: dropped %v, held %d; want true, 40", dropped, held)
	}
	n.clearDropped(group)
	if dropped, _ := n.droppedMark(group); dropped {
		t.Fatal("the marker survived its clearing")
	}
}
