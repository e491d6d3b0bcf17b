package cluster

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

type nopFSM struct{}

func (nopFSM) Apply(*raft.Log) any                 { return nil }
func (nopFSM) Snapshot() (raft.FSMSnapshot, error) { return nil, nil }
func (nopFSM) Restore(rc io.ReadCloser) error      { return rc.Close() }

// A replica with no configuration (just placed, not yet heard from its leader) grants no vote through the
// guard, over real TCP; once it has a configuration it votes as raft decides.
func TestVoteGuardRefusesWithoutConfiguration(t *testing.T) {
	tr, err := raft.NewTCPTransport("127.0.0.1:0", nil, 2, time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	guard := newVoteGuard(tr, slog.New(slog.DiscardHandler))
	c := raft.DefaultConfig()
	c.LocalID = "empty"
	c.Logger = hclogFor(slog.New(slog.DiscardHandler), "test")
	store := raft.NewInmemStore()
	r, err := raft.NewRaft(c, nopFSM{}, store, store, raft.NewInmemSnapshotStore(), guard)
	if err != nil {
		t.Fatal(err)
	}
	guard.raft.Store(r)
	defer r.Shutdown()

	client, err := raft.NewTCPTransport("127.0.0.1:0", nil, 2, time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ask := func() *raft.RequestVoteResponse {
		req := &raft.RequestVoteRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax,
			ID: []byte("stale"), Addr: []byte(client.LocalAddr())}, Term: 9, LastLogIndex: 5, LastLogTerm: 3}
		var resp raft.RequestVoteResponse
		if err := client.RequestVote("empty", tr.LocalAddr(), req, &resp); err != nil {
			t.Fatal(err)
		}
		return &resp
	}
	if resp := ask(); resp.Granted {
		t.Fatal("a replica without configuration granted a vote")
	}
	if guard.count.Load() != 1 {
		t.Fatalf("refused %d votes, want 1", guard.count.Load())
	}
	// With a configuration that names the candidate, raft itself decides (and grants: the candidate's log is
	// ahead and no leader is known).
	boot := raft.Configuration{Servers: []raft.Server{{ID: "empty", Address: tr.LocalAddr()},
		{ID: "stale", Address: client.LocalAddr()}, {ID: "third", Address: "127.0.0.1:1"}}}
	if err := r.BootstrapCluster(boot).Error(); err != nil {
		t.Fatal(err)
	}
	if resp := ask(); !resp.Granted {
		t.Fatalf("a configured replica refused a vote raft would grant: %+v", resp)
	}
}
