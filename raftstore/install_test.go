package raftstore

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// handLeader plays a raft leader by hand against one follower over raft's in-memory transport, so a test can
// send it exactly the appends and snapshots a real leader could.
type handLeader struct {
	t     *testing.T
	trans *raft.InmemTransport
	addr  raft.ServerAddress
	to    raft.ServerAddress
}

func (l *handLeader) header() raft.RPCHeader {
	return raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("l"), Addr: l.trans.EncodePeer("l", l.addr)}
}

// appendEntries sends entries from..to of the leader's term after prev (of prevTerm), with commit, and wants
// success.
func (l *handLeader) appendEntries(term, prev, prevTerm, from, to, commit uint64) {
	l.t.Helper()
	req := &raft.AppendEntriesRequest{RPCHeader: l.header(), Term: term, PrevLogEntry: prev, PrevLogTerm: prevTerm,
		LeaderCommitIndex: commit}
	for i := from; i <= to; i++ {
		req.Entries = append(req.Entries, &raft.Log{Index: i, Term: term, Type: raft.LogCommand, Data: []byte("x")})
	}
	var resp raft.AppendEntriesResponse
	if err := l.trans.AppendEntries("f", l.to, req, &resp); err != nil || !resp.Success {
		l.t.Fatalf("append after %d: err %v, success %v (follower's last log %d)", prev, err, resp.Success, resp.LastLog)
	}
}

// installSnapshot sends a snapshot at index, of term, whose state is count commands, and wants success.
func (l *handLeader) installSnapshot(term, index, count uint64, conf raft.Configuration) {
	l.t.Helper()
	data := binary.BigEndian.AppendUint64(nil, count)
	req := &raft.InstallSnapshotRequest{RPCHeader: l.header(), SnapshotVersion: raft.SnapshotVersionMax, Term: term,
		LastLogIndex: index, LastLogTerm: term, Configuration: raft.EncodeConfiguration(conf), ConfigurationIndex: 1,
		Size: int64(len(data))}
	var resp raft.InstallSnapshotResponse
	if err := l.trans.InstallSnapshot("f", l.to, req, &resp, bytes.NewReader(data)); err != nil || !resp.Success {
		l.t.Fatalf("install at %d: err %v, success %v", index, err, resp.Success)
	}
}

// handFollower starts a follower "f" of a leader "l" played by hand, on raftstore's log and stable store behind
// the cache memnode uses. It never campaigns nor snapshots on its own, and keeps two entries behind a snapshot.
func handFollower(t *testing.T) (*raft.Raft, *countFSM, *Store, *handLeader, raft.Configuration) {
	store, _ := newTestStore(t)
	logs := NewCache(store, CacheEntries, CacheBytes)
	snaps, err := raft.NewFileSnapshotStoreWithLogger(t.TempDir(), 2, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	faddr, ftrans := raft.NewInmemTransport("f")
	laddr, ltrans := raft.NewInmemTransport("l")
	ftrans.Connect(laddr, ltrans)
	ltrans.Connect(faddr, ftrans)
	conf := raft.DefaultConfig()
	conf.LocalID = "f"
	conf.Logger = hclog.NewNullLogger()
	conf.HeartbeatTimeout, conf.ElectionTimeout, conf.LeaderLeaseTimeout = time.Hour, time.Hour, time.Hour
	conf.SnapshotInterval, conf.SnapshotThreshold, conf.TrailingLogs = time.Hour, 1<<40, 2
	members := raft.Configuration{Servers: []raft.Server{{ID: "l", Address: laddr}, {ID: "f", Address: faddr}}}
	if err := raft.BootstrapCluster(conf, logs, store, snaps, ftrans, members); err != nil {
		t.Fatal(err)
	}
	fsm := &countFSM{}
	r, err := raft.NewRaft(conf, fsm, logs, store, snaps, ftrans)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Shutdown().Error() })
	return r, fsm, store, &handLeader{t: t, trans: ltrans, addr: laddr, to: faddr}, members
}

// A follower whose log runs past an installed snapshot with entries of an older term empties it, so the leader's
// next append after the snapshot is taken (the raft fork's third change, hashicorp/raft#697). Upstream raft kept
// the stale entries above the snapshot and its last log among them: the append's previous entry (the snapshot's)
// was gone, and the leader sent the snapshot again, forever.
func TestInstalledSnapshotReplacesAStaleLog(t *testing.T) {
	_, fsm, _, leader, members := handFollower(t)
	leader.appendEntries(1, 1, 1, 2, 130, 100) // 99 commands committed, 101..130 not
	waitCount(t, fsm, 99)
	// A new leader of term 2 rewrote 101..130, and sends its snapshot at 120 (119 commands).
	leader.installSnapshot(2, 120, 119, members)
	leader.appendEntries(2, 120, 2, 121, 125, 125)
	waitCount(t, fsm, 124)
	if n := fsm.count(); n != 124 {
		t.Fatalf("state machine holds %d commands, want 124", n)
	}
}

// A leader's snapshot older than what a follower applied leaves the follower's state machine and log as they are,
// and the leader's next append, over entries the follower applied and no longer holds, is taken (the raft fork's
// fourth change, third_party/raft/MEMCLUSTER.md). Upstream raft restored the snapshot, so the state machine went
// back, and then refused that append: the follower had compacted the entries it was to apply again.
func TestOlderSnapshotLeavesFollowerAsItIs(t *testing.T) {
	r, fsm, store, leader, members := handFollower(t)
	leader.appendEntries(1, 1, 1, 2, 101, 101) // index 1 is the bootstrap configuration: 100 commands
	waitCount(t, fsm, 100)
	if err := r.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	if first, _ := store.FirstIndex(); first != 100 {
		t.Fatalf("after the follower's snapshot its log starts at %d, want 100", first)
	}

	leader.installSnapshot(1, 50, 49, members)
	if n := fsm.count(); n != 100 {
		t.Fatalf("after an older snapshot the state machine holds %d commands, want 100", n)
	}
	leader.appendEntries(1, 50, 1, 51, 105, 105)
	waitCount(t, fsm, 104) // each of 102..105 applied once, none of 51..101 again
	if n := fsm.count(); n != 104 {
		t.Fatalf("state machine holds %d commands, want 104", n)
	}
}

// waitCount waits until the state machine has applied n commands or more.
func waitCount(t *testing.T, fsm *countFSM, n uint64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); fsm.count() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("state machine holds %d commands, want %d", fsm.count(), n)
		}
	}
}
