package cluster

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// An AppendEntries or InstallSnapshot to a peer whose port refuses (its process is down) waits for the peer to
// listen, up to raft's RPC timeout, instead of failing at once, and is answered once the peer is back. Other RPCs
// (a TimeoutNow) and heartbeats fail at once, and stopWaiting ends a wait at once.
func TestReplicationWaitsForARefusingPeer(t *testing.T) {
	addr := freeAddr(t) // nobody listens here yet: dials are refused
	local := newPeerWait(newTestTransport(t, freeAddr(t), 7))
	got := make(chan error, 1)
	go func() {
		got <- local.AppendEntries("peer", raft.ServerAddress(addr), &raft.AppendEntriesRequest{Term: 1},
			&raft.AppendEntriesResponse{})
	}()
	if err := local.TimeoutNow("peer", raft.ServerAddress(addr), &raft.TimeoutNowRequest{},
		&raft.TimeoutNowResponse{}); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("TimeoutNow to a refusing peer: %v, want refused at once", err)
	}
	heartbeat := &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{Addr: []byte("leader")}, Term: 1}
	if err := local.AppendEntries("peer", raft.ServerAddress(addr), heartbeat,
		&raft.AppendEntriesResponse{}); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("heartbeat to a refusing peer: %v, want refused at once", err)
	}
	select {
	case err := <-got:
		t.Fatalf("AppendEntries returned before the peer listened: %v", err)
	case <-time.After(3 * refusedRetry):
	}
	peer := newTestTransport(t, addr, 7)
	go func() {
		rpc := <-peer.Consumer()
		rpc.Respond(&raft.AppendEntriesResponse{Term: 1, Success: true}, nil)
	}()
	if err := <-got; err != nil {
		t.Fatalf("AppendEntries once the peer listens: %v", err)
	}

	// An InstallSnapshot waits the same way; the peer reads the snapshot's bytes once it is up.
	addr = freeAddr(t)
	go func() {
		got <- local.InstallSnapshot("peer", raft.ServerAddress(addr), &raft.InstallSnapshotRequest{Term: 1, Size: 5},
			&raft.InstallSnapshotResponse{}, strings.NewReader("state"))
	}()
	select {
	case err := <-got:
		t.Fatalf("InstallSnapshot returned before the peer listened: %v", err)
	case <-time.After(3 * refusedRetry):
	}
	peer = newTestTransport(t, addr, 7)
	go func() {
		rpc := <-peer.Consumer()
		b, err := io.ReadAll(io.LimitReader(rpc.Reader, 5))
		if err == nil && string(b) != "state" {
			err = fmt.Errorf("snapshot bytes %q", b)
		}
		rpc.Respond(&raft.InstallSnapshotResponse{Term: 1, Success: true}, err)
	}()
	if err := <-got; err != nil {
		t.Fatalf("InstallSnapshot once the peer listens: %v", err)
	}

	addr = freeAddr(t)
	go func() {
		got <- local.AppendEntries("peer", raft.ServerAddress(addr), &raft.AppendEntriesRequest{Term: 1},
			&raft.AppendEntriesResponse{})
	}()
	local.stopWaiting() // before or during the wait: either way the call ends refused
	select {
	case err := <-got:
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("AppendEntries after stopWaiting: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("stopWaiting did not end the wait")
	}
}

// newTestTransport is group g's raft transport on a mux listening on addr.
func newTestTransport(t *testing.T, addr string, g uint32) *raft.NetworkTransport {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	m, err := newMux(ln, addr, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	nt := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{Stream: m.layer(g), MaxPool: 1,
		Timeout: raftRPCTimeout, MaxRPCsInFlight: 1})
	t.Cleanup(func() {
		nt.Close()
		m.close()
	})
	return nt
}
