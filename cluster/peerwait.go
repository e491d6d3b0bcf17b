package cluster

import (
	"errors"
	"io"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/raft"
)

// peerWaitTransport retries an AppendEntries or InstallSnapshot whose dial the peer refused (its process is
// down, its port closed) every refusedRetry until raft's RPC timeout has passed, instead of failing it at once.
//
// hashicorp/raft backs off exponentially on every failed RPC to a follower, up to 10 s between tries
// (hashicorp/raft#73): a follower down for ten seconds waited about as long again after its restart before
// its leaders sent it an entry, so its meta replica could not catch up and the shards it held started only
// then. A refused RPC that waits counts one failure per RPC timeout instead of a doubling series,
// and reaches the peer within refusedRetry of its return. Only those two wait, and not heartbeats: a
// TimeoutNow blocked on a dead target would hold the leader's transfer, and with it every write of the group,
// until it ended. (A transfer to a dead target that is behind still waits for its replicator, as it did while
// raft backed off: up to the election timeout, or up to 10 s when a second try finds the trigger channel full.)
type peerWaitTransport struct {
	raftTransport
	quit chan struct{}
	once sync.Once
}

// refusedRetry is how often a refused call is tried again while it waits for the peer: one dial per group per
// down peer every refusedRetry.
const refusedRetry = 250 * time.Millisecond

func newPeerWait(t raftTransport) *peerWaitTransport {
	return &peerWaitTransport{raftTransport: t, quit: make(chan struct{})}
}

// AppendEntries implements raft.Transport. A heartbeat does not wait: raft caps its backoff already, and the
// follower's catch-up rides on the replication calls.
func (t *peerWaitTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest,
	resp *raft.AppendEntriesResponse) error {
	call := func() error { return t.raftTransport.AppendEntries(id, target, args, resp) }
	if isHeartbeat(args) {
		return call()
	}
	return t.whileRefused(call)
}

// InstallSnapshot implements raft.Transport. A refused dial reads nothing of data, so the call can be made again;
// and raft opens the snapshot (for a shard, materializes it from Pebble) before each try, so fewer tries to a
// down follower also mean fewer copies of the shard written.
func (t *peerWaitTransport) InstallSnapshot(id raft.ServerID, target raft.ServerAddress, args *raft.InstallSnapshotRequest,
	resp *raft.InstallSnapshotResponse, data io.Reader) error {
	return t.whileRefused(func() error { return t.raftTransport.InstallSnapshot(id, target, args, resp, data) })
}

// whileRefused makes call until it returns anything but a refused connection, raft's RPC timeout has passed, or
// the waits are stopped.
func (t *peerWaitTransport) whileRefused(call func() error) error {
	deadline := time.Now().Add(raftRPCTimeout)
	for {
		err := call()
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || time.Until(deadline) < refusedRetry {
			return err
		}
		select {
		case <-time.After(refusedRetry):
		case <-t.quit:
			return err
		}
	}
}

// RequestPreVote implements raft.WithPreVote.
func (t *peerWaitTransport) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest,
	resp *raft.RequestPreVoteResponse) error {
	return t.raftTransport.(raft.WithPreVote).RequestPreVote(id, target, args, resp)
}

// stopWaiting ends the waits, now and later. It must come before raft's Shutdown, which waits for the
// replication goroutines that may be in one.
func (t *peerWaitTransport) stopWaiting() {
	if t != nil {
		t.once.Do(func() { close(t.quit) })
	}
}

// Close implements raft.WithClose.
func (t *peerWaitTransport) Close() error {
	t.stopWaiting()
	return t.raftTransport.Close()
}
