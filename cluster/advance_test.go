package cluster

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// A replica placed where the node's marker says a dropped one held more than the shard's log will reach — the
// predecessor's tail past the commit, discarded — would stay passive in a shard that takes no writes. Its node
// proposes empty entries through the leader until the log gets there. Here the marker is planted on the one node
// without a replica of the single shard, the shard goes idle, and a drain moves a replica there.
func TestIdleShardAdvancesPastADroppedReplica(t *testing.T) {
	cfg := testConfig()
	cfg.Shards, cfg.Replicas = 1, 2
	c := makeCluster(t, 3, cfg)
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")
	for i := 0; i < 5; i++ {
		if _, err := c.put(c.nodes[i%3], "idle-user", "before the move"); err != nil {
			t.Fatal(err)
		}
	}
	var free, holder *testNode
	var leader *Replica
	waitFor(t, 30*time.Second, "the shard on two nodes with a leader", func() bool {
		free, holder, leader = nil, nil, nil
		for _, tn := range c.nodes {
			r, ok := tn.Replica(0)
			switch {
			case !ok:
				free = tn
			case r.raft.State() == raft.Leader:
				leader = r
			default:
				holder = tn
			}
		}
		return free != nil && holder != nil && leader != nil
	})
	held := leader.raft.LastIndex() + 100
	if err := free.db.SetNode(droppedKey(0), droppedValue(held)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "every node alive to the deciding node", func() bool { return len(c.nodes[0].liveMembers()) == 3 })
	if _, err := c.nodes[0].SetNodeState(ctxFor(t, 30*time.Second), holder.cfg.NodeID, NodeDraining, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 90*time.Second, "the new replica's log to reach what the dropped one held", func() bool {
		r, ok := free.Replica(0)
		return ok && r.raft.LastIndex() >= held
	})
}
