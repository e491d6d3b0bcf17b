package cluster

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// voteGuard stands between a group's network transport and its raft instance. While this node deleted a
// replica of the group before (dropped.go) and the local replica has not caught up with it — no configuration
// yet, or a log short of the last index the deleted replica held — it refuses votes (and pre-votes), and
// mayCampaign keeps the replica from becoming a candidate (raft's Config.MayCampaign, a change of memcluster's
// raft fork).
//
// hashicorp/raft grants a vote when its configuration is empty, taking it for a cluster being bootstrapped by
// election. An empty replica on a node the group removed moments ago is the dangerous case: a voter that was
// removed while dead and comes back with its old configuration counts this node as a voter, and the empty
// replica's vote let it win an election with a log that lacked the newest entries, which it then cut from the
// replicas that held them (seen in the chaos campaign: 437 entries cleared from two replicas of one shard). The
// old replica's acknowledgements counted toward quorums; its empty successor cannot keep the promises they made.
// A configuration alone is not enough: the leader may send the new replica a snapshot older than its
// predecessor's removal, whose configuration names this node a voter. Such a replica won an election with its
// own vote and that of a voter removed while dead (the chaos campaign again: 2,100 committed entries cut from
// two replicas). Once its log reaches the last index its predecessor held, the replica holds entries up to every
// index its predecessor acknowledged, and raft decides alone. That is weaker than having kept the predecessor's
// state: the new replica starts at term 0 and compares indexes, not (term, index), so a deposed leader that
// still counts this node could fill its log; raft ids per replica incarnation would close that (not built).
// A shard idle short of that index gets there through entries the replica's node proposes (advance.go).
//
// An empty replica that never held the group here acknowledged nothing, so no commit counted on it and its
// vote cannot elect a candidate lacking a committed entry (every commit quorum is made of other voters, and a
// candidate needs one of them too). It must vote: an initial voter that missed its bootstrap (the meta group
// formed first) is empty, and if another voter dies before the leader reaches it, the survivors can elect only
// with its vote (seen in the race pass of the cluster tests: two shards without a leader for good).
type voteGuard struct {
	raftTransport
	in   <-chan raft.RPC
	out  chan raft.RPC
	raft atomic.Pointer[raft.Raft]
	// dropped: this node deleted a replica of the group before; cleared (and onConfigured called, once) when
	// the replica has a configuration and its last index reaches held, the last index the deleted replica held
	// (0 when unknown).
	dropped       atomic.Bool
	held          atomic.Uint64
	leaderCommit  atomic.Uint64 // the highest commit index a leader sent while dropped
	onConfigured  func()
	log           *slog.Logger
	stop          chan struct{}
	once          sync.Once
	count         atomic.Int64 // votes refused
	campaignsHeld atomic.Int64 // elections not started
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

// refuse answers a vote or pre-vote request itself, not granted, while the local replica has not caught up
// with the replica this node dropped.
func (g *voteGuard) refuse(rpc raft.RPC) bool {
	if !g.dropped.Load() {
		return false
	}
	if req, ok := rpc.Command.(*raft.AppendEntriesRequest); ok {
		g.sawLeaderCommit(req.LeaderCommitIndex)
	}
	// Until raft is stored (it consumes RPCs from inside NewRaft) the configuration is unknown: refuse.
	if r := g.raft.Load(); r != nil && g.caughtUp(r) && len(r.GetConfiguration().Configuration().Servers) > 0 {
		// Inline (one fsync, once per replica): cleared later, it could delete the marker of a next drop.
		if g.dropped.CompareAndSwap(true, false) && g.onConfigured != nil {
			g.onConfigured()
		}
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
		g.log.Info("refusing votes until this replica catches up with the one this node dropped", "held", g.held.Load())
	}
	return true
}

// sawLeaderCommit records the highest commit index a leader sent while the replica is guarded (advance.go
// proposes only once the replica holds it).
func (g *voteGuard) sawLeaderCommit(c uint64) {
	for {
		seen := g.leaderCommit.Load()
		if c <= seen || g.leaderCommit.CompareAndSwap(seen, c) {
			return
		}
	}
}

// caughtUp reports whether r's log reaches the last index the dropped replica held.
func (g *voteGuard) caughtUp(r *raft.Raft) bool { return r.LastIndex() >= g.held.Load() }

// mayCampaign is raft's Config.MayCampaign: a replica that has not caught up with the one this node dropped
// stays a follower. raft asks it from its own loop, so it reads no configuration (that would wait on the loop).
func (g *voteGuard) mayCampaign() bool {
	if !g.dropped.Load() {
		return true
	}
	r := g.raft.Load()
	if r != nil && g.caughtUp(r) {
		return true
	}
	if g.held.Load() > 0 && g.campaignsHeld.Add(1) == 1 {
		g.log.Info("not campaigning until this replica catches up with the one this node dropped", "held", g.held.Load())
	}
	return false
}
