package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// A replica removed from its raft group and added back while the placement still lists it must catch up. A
// chaos run (seed 9018) met this: placement moved a replica away and back within seconds, hashicorp/raft's
// default ShutdownOnRemove stopped the removed replica's raft, and the node kept the dead replica because the
// placement wanted it — so the shard never got its third copy back.
func TestReplicaRemovedAndReaddedCatchesUp(t *testing.T) {
	c := makeCluster(t, 3, testConfig())
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")
	const user = "alice"
	shard, _ := c.nodes[0].ShardFor(context.Background(), user)
	var leader, follower *testNode
	waitFor(t, 20*time.Second, "a shard leader", func() bool {
		for _, tn := range c.nodes {
			if r, ok := tn.Replica(shard); ok && r.IsLeader() {
				leader = tn
			}
		}
		return leader != nil
	})
	for _, tn := range c.nodes {
		if tn != leader {
			follower = tn
			break
		}
	}
	lr, _ := leader.Replica(shard)
	if err := lr.raft.RemoveServer(raft.ServerID(follower.cfg.NodeID), 0, 5*time.Second).Error(); err != nil {
		t.Fatal(err)
	}
	// The leader's reconcile loop adds the follower back: the placement still lists it.
	waitFor(t, 20*time.Second, "the follower back in the configuration", func() bool {
		servers, err := lr.Configuration()
		if err != nil {
			return false
		}
		for _, s := range servers {
			if string(s.ID) == follower.cfg.NodeID {
				return true
			}
		}
		return false
	})
	for i := range 20 {
		if _, err := c.put(leader, user, fmt.Sprintf("after the rejoin %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	fr, _ := follower.Replica(shard)
	waitFor(t, 20*time.Second, "the re-added follower to catch up", func() bool {
		return fr.raft.State() != raft.Shutdown && fr.raft.AppliedIndex() >= lr.raft.AppliedIndex()
	})
}
