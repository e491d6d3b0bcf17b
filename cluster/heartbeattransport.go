package cluster

import (
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// raftTransport is what a raft group's transport offers the node: raft's NetworkTransport, or that wrapped by
// coalescingTransport.
type raftTransport interface {
	raft.Transport
	raft.WithClose
	// CloseStreams closes the transport's connections (and fails its RPCs waiting on them); it stays usable.
	CloseStreams()
}

var (
	_ raftTransport    = (*raft.NetworkTransport)(nil)
	_ raftTransport    = (*coalescingTransport)(nil)
	_ raft.WithPreVote = (*coalescingTransport)(nil)
)

// coalescingTransport is a shard group's NetworkTransport whose empty AppendEntries go through the node's
// heartbeat coalescer, and which takes the coalescer's incoming RPCs for its group. Everything else (entries,
// votes, pre-votes, snapshots, TimeoutNow) is the NetworkTransport's, embedded.
type coalescingTransport struct {
	*raft.NetworkTransport
	hb    *heartbeats
	group uint32

	// consumer is what raft reads RPCs from: the NetworkTransport's, forwarded, and the coalescer's.
	consumer chan raft.RPC
	done     chan struct{}
	once     sync.Once

	// raft is the group's instance once started: its term and state tell which heartbeats can be answered
	// inline (heartbeats.go).
	raft atomic.Pointer[raft.Raft]

	mu    sync.Mutex
	hbFn  func(raft.RPC)
	abort chan struct{} // closed by CloseStreams: coalesced calls waiting for replies give up
}

func newCoalescingTransport(inner *raft.NetworkTransport, hb *heartbeats, group uint32) *coalescingTransport {
	t := &coalescingTransport{NetworkTransport: inner, hb: hb, group: group, consumer: make(chan raft.RPC),
		done: make(chan struct{}), abort: make(chan struct{})}
	go t.forward()
	hb.register(t)
	return t
}

// forward hands raft the RPCs that arrive on the group's own connections.
func (t *coalescingTransport) forward() {
	in := t.NetworkTransport.Consumer()
	for {
		select {
		case rpc := <-in:
			select {
			case t.consumer <- rpc:
			case <-t.done:
				return
			}
		case <-t.done:
			return
		}
	}
}

// Consumer implements raft.Transport.
func (t *coalescingTransport) Consumer() <-chan raft.RPC { return t.consumer }

// SetHeartbeatHandler implements raft.Transport: raft's fast path for heartbeats serves both the group's own
// connections and the coalesced ones.
func (t *coalescingTransport) SetHeartbeatHandler(fn func(raft.RPC)) {
	t.mu.Lock()
	t.hbFn = fn
	t.mu.Unlock()
	t.NetworkTransport.SetHeartbeatHandler(fn)
}

func (t *coalescingTransport) heartbeatHandler() func(raft.RPC) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.hbFn
}

func (t *coalescingTransport) aborted() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.abort
}

// AppendEntries implements raft.Transport. An empty one goes in the next batch to the target's node unless
// that node's heartbeat stream is unavailable (before it answers, or a node that does not serve it); then,
// like every AppendEntries with entries, it goes on the group's own connection.
func (t *coalescingTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	if len(args.Entries) == 0 {
		if err := t.hb.send(t, target, args, resp); err != errHeartbeatDirect {
			return err
		}
	}
	return t.NetworkTransport.AppendEntries(id, target, args, resp)
}

// CloseStreams also fails the group's coalesced calls still waiting: the node's shutdown relies on it to
// unblock a raft replication goroutine stuck on an unresponsive peer.
func (t *coalescingTransport) CloseStreams() {
	t.mu.Lock()
	close(t.abort)
	t.abort = make(chan struct{})
	t.mu.Unlock()
	t.NetworkTransport.CloseStreams()
}

// Close implements raft.WithClose.
func (t *coalescingTransport) Close() error {
	t.once.Do(func() {
		t.hb.unregister(t)
		close(t.done)
		t.mu.Lock()
		close(t.abort)
		t.abort = make(chan struct{})
		t.mu.Unlock()
	})
	return t.NetworkTransport.Close()
}
