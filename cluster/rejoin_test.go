package cluster

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// A replica removed from its raft group and added back while the placement still lists it must catch up
// (chaos seeds 9004 and 9018 met placed replicas that never did; see docs/reliability.md).
func TestReplicaRemovedAndReaddedCatchesUp(t *testing.T) {
	c := makeCluster(t, 3, testConfig())
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")
	const user = "alice"
	shard, _ := c.nodes[0].ShardFor(ctxFor(t, 30*time.Second), user)
	leaderOf := func() *testNode {
		for _, tn := range c.nodes {
			if r, ok := tn.Replica(shard); ok && r.IsLeader() {
				return tn
			}
		}
		return nil
	}
	var follower *testNode
	// Leadership may move under a loaded machine (the -race pass): retry with whoever leads.
	waitFor(t, 30*time.Second, "a follower removed from the group", func() bool {
		leader := leaderOf()
		if leader == nil {
			return false
		}
		for _, tn := range c.nodes {
			if tn != leader {
				follower = tn
				break
			}
		}
		lr, _ := leader.Replica(shard)
		return lr.raft.RemoveServer(raft.ServerID(follower.cfg.NodeID), 0, 5*time.Second).Error() == nil
	})
	// The leader's reconcile loop adds the follower back: the placement still lists it.
	waitFor(t, 30*time.Second, "the follower back in the configuration", func() bool {
		leader := leaderOf()
		if leader == nil {
			return false
		}
		lr, _ := leader.Replica(shard)
		servers, err := lr.Configuration()
		if err != nil {
			return false
		}
		for _, s := range servers {
			if string(s.ID) == follower.cfg.NodeID && s.Suffrage == raft.Voter {
				return true
			}
		}
		return false
	})
	for i := range 20 {
		if _, err := c.put(c.nodes[i%3], user, fmt.Sprintf("after the rejoin %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 30*time.Second, "the re-added follower to catch up", func() bool {
		leader := leaderOf()
		fr, ok := follower.Replica(shard)
		if leader == nil || !ok {
			return false
		}
		lr, _ := leader.Replica(shard)
		return fr.raft.State() != raft.Shutdown && fr.FSM.AppliedIndex() >= lr.FSM.AppliedIndex()
	})
}
