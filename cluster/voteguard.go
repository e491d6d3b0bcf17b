package cluster

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// voteGuard stands between a group's network transport and its raft instance and refuses votes (and pre-votes)
// while the local replica knows no configuration.
//
// hashicorp/raft grants a vote when its configuration is empty, taking it for a cluster being bootstrapped by
// election. Here groups are never formed that way (BootstrapCluster, or a split's snapshot, gives every first
// voter its configuration), and an empty replica is one that was just placed on this node and has not heard from
// its leader yet — often on a node the group removed moments ago. A voter that was removed while dead and comes
// back with its old configuration counts this node as a voter, and the empty replica's vote let it win an
// election with a log that lacked the newest entries, which it then cut from the replicas that held them (seen
// in the chaos campaign: 437 entries cleared from two replicas of one shard). A vote is a promise a replica
// without state cannot keep; refusing it is what raft's safety assumes of every voter.
type voteGuard struct {
	raftTransport
	in    <-chan raft.RPC
	out   chan raft.RPC
	raft  atomic.Pointer[raft.Raft]
	log   *slog.Logger
	stop  chan struct{}
	once  sync.Once
	count atomic.Int64 // votes refused
}

func newVoteGuard(t raftTransport, log *slog.Logger) *voteGuard {
	g := &voteGuard{raftTransport: t, in: t.Consumer(), out: make(chan raft.RPC), log: log, stop: make(chan struct{})}
	go g.run()
	return g
}

// RequestPreVote implements raft.WithPreVote (raft turns pre-vote off for a transport without it).
func (g *voteGuard) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest,
	resp *raft.RequestPreVoteResponse) error {
	return g.raftTransport.(raft.WithPreVote).RequestPreVote(id, target, args, resp)
}

// Consumer implements raft.Transport: the RPCs raft processes, votes checked.
func (g *voteGuard) Consumer() <-chan raft.RPC { return g.out }

// Close implements raft.WithClose.
func (g *voteGuard) Close() error {
	g.once.Do(func() { close(g.stop) })
	return g.raftTransport.Close()
}

func (g *voteGuard) run() {
	for {
		var rpc raft.RPC
		select {
		case rpc = <-g.in:
		case <-g.stop:
			return
		}
		if g.refuse(rpc) {
			continue
		}
		select {
		case g.out <- rpc:
		case <-g.stop:
			rpc.Respond(nil, raft.ErrTransportShutdown)
			return
		}
	}
}

// refuse answers a vote or pre-vote request itself, not granted, when the local replica has no configuration.
func (g *voteGuard) refuse(rpc raft.RPC) bool {
	r := g.raft.Load()
	if r == nil || len(r.GetConfiguration().Configuration().Servers) > 0 {
		return false
	}
	hdr := raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax}
	switch req := rpc.Command.(type) {
	case *raft.RequestVoteRequest:
		rpc.Respond(&raft.RequestVoteResponse{RPCHeader: hdr, Term: req.Term}, nil)
	case *raft.RequestPreVoteRequest:
		rpc.Respond(&raft.RequestPreVoteResponse{RPCHeader: hdr, Term: req.Term}, nil)
	default:
		return false
	}
	if g.count.Add(1) == 1 {
		g.log.Info("refusing votes until this replica learns its group's configuration")
	}
	return true
}
