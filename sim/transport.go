package sim

import (
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/raft"
)

// rpcTimeout bounds how long an InmemTransport RPC waits for the peer to take and answer it. Short, so a send to
// a stopped node fails fast; InstallSnapshot gets 10x.
const rpcTimeout = 200 * time.Millisecond

// transport is raft.InmemTransport with every RPC routed through the Network's fault check: the request leg
// before delivery and the response leg after. A cut response leg means the peer acted on the request but the
// caller sees an error, which is what a one-way partition does to a real RPC.
//
// Pipelining is refused so that every AppendEntries goes through AppendEntries and its fault check.
type transport struct {
	*raft.InmemTransport
	net   *Network
	self  int
	index map[raft.ServerAddress]int
}

func newTransport(net *Network, self int, addr raft.ServerAddress) *transport {
	_, in := raft.NewInmemTransportWithTimeout(addr, rpcTimeout)
	return &transport{InmemTransport: in, net: net, self: self, index: map[raft.ServerAddress]int{}}
}

// connect wires t to every other transport; all connects happen before raft starts, so index is read-only after.
func connect(ts []*transport) {
	for _, a := range ts {
		for j, b := range ts {
			a.index[b.LocalAddr()] = j
			if a != b {
				a.Connect(b.LocalAddr(), b.InmemTransport)
			}
		}
	}
}

func (t *transport) call(target raft.ServerAddress, rpc func() error) error {
	to, ok := t.index[target]
	if !ok {
		return fmt.Errorf("sim: unknown peer %s", target)
	}
	if err := t.net.leg(t.self, to); err != nil {
		return err
	}
	if err := rpc(); err != nil {
		return err
	}
	return t.net.leg(to, t.self)
}

// AppendEntriesPipeline implements raft.Transport: unsupported, see transport.
func (t *transport) AppendEntriesPipeline(raft.ServerID, raft.ServerAddress) (raft.AppendPipeline, error) {
	return nil, raft.ErrPipelineReplicationNotSupported
}

// AppendEntries implements raft.Transport.
func (t *transport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	return t.call(target, func() error { return t.InmemTransport.AppendEntries(id, target, args, resp) })
}

// RequestVote implements raft.Transport.
func (t *transport) RequestVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestVoteRequest, resp *raft.RequestVoteResponse) error {
	return t.call(target, func() error { return t.InmemTransport.RequestVote(id, target, args, resp) })
}

// RequestPreVote implements raft.WithPreVote.
func (t *transport) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	return t.call(target, func() error { return t.InmemTransport.RequestPreVote(id, target, args, resp) })
}

// InstallSnapshot implements raft.Transport.
func (t *transport) InstallSnapshot(id raft.ServerID, target raft.ServerAddress, args *raft.InstallSnapshotRequest, resp *raft.InstallSnapshotResponse, data io.Reader) error {
	err := t.call(target, func() error { return t.InmemTransport.InstallSnapshot(id, target, args, resp, data) })
	if err == nil {
		t.net.stats.snapshots.Add(1)
	}
	return err
}

// TimeoutNow implements raft.Transport.
func (t *transport) TimeoutNow(id raft.ServerID, target raft.ServerAddress, args *raft.TimeoutNowRequest, resp *raft.TimeoutNowResponse) error {
	return t.call(target, func() error { return t.InmemTransport.TimeoutNow(id, target, args, resp) })
}
