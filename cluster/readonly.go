package cluster

import (
	"github.com/hashicorp/raft"
)

// A node whose disk turned read-only (under its free-space watermark, or failing writes) hands the leadership
// of its shards to a healthy replica: the shard keeps taking writes through the other replicas, which make a
// quorum without this node, instead of refusing them until an operator frees space. Proposals that still
// reach it meanwhile answer not_leader, so the coordinator retries on the new leader.

// The same holds for a replica elected while its indexes still load after a restart (loading.go): it would answer
// no linearizable search until they have.

// shedLeadership starts a leadership transfer for every shard this node leads while its disk is read-only, or
// while the replica's indexes load. It runs on every reconcile tick; a transfer already under way makes raft
// refuse the next one, harmlessly.
func (n *Node) shedLeadership() {
	readOnly := n.db.WriteHealth() != nil
	for _, s := range n.LeaderShards() {
		r, ok := n.Replica(s)
		if !ok || !n.hasPeers(r) {
			continue
		}
		switch {
		case readOnly:
			n.log.Warn("disk read-only: transferring shard leadership", "shard", s)
			n.metrics.leaderShed.Inc()
		case r.indexesLoading():
			n.log.Info("elected while the replica's indexes load: transferring shard leadership", "shard", s)
		default:
			continue
		}
		f := r.raft.LeadershipTransfer()
		go func() {
			if err := f.Error(); err != nil {
				n.log.Warn("leadership transfer", "shard", s, "err", err)
			}
		}()
	}
}

// hasPeers reports whether r's shard has another voter that could lead it.
func (n *Node) hasPeers(r *Replica) bool { return r.otherVoter(n.cfg.NodeID) }

// otherVoter reports whether r's group has a voter other than self.
func (r *Replica) otherVoter(self string) bool {
	servers, err := r.Configuration()
	if err != nil {
		return false
	}
	for _, s := range servers {
		if s.Suffrage == raft.Voter && string(s.ID) != self {
			return true
		}
	}
	return false
}
