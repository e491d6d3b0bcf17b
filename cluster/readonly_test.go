package cluster

import (
	"fmt"
	"testing"
	"time"
)

// A leader whose disk fills up gives up the leadership of its shards, so every shard gets a leader on a
// healthy node and keeps taking writes — including writes coordinated by the read-only node itself.
func TestReadOnlyNodeShedsLeadership(t *testing.T) {
	c := makeCluster(t, 3, testConfig())
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")
	var sick *testNode
	waitFor(t, 20*time.Second, "a node leading a shard", func() bool {
		for _, tn := range c.nodes {
			if len(tn.LeaderShards()) > 0 {
				sick = tn
				return true
			}
		}
		return false
	})
	led := sick.LeaderShards()
	sick.disk.full.Store(true)
	if sick.WriteHealth() == nil {
		t.Fatal("a node whose disk has no free space should be read-only")
	}
	waitFor(t, 20*time.Second, "every shard led by a healthy node", func() bool {
		n := 0
		for _, tn := range c.nodes {
			if tn != sick {
				n += len(tn.LeaderShards())
			}
		}
		return len(sick.LeaderShards()) == 0 && n == 4
	})
	t.Logf("%s gave up shards %v", sick.cfg.NodeID, led)
	for i := range 8 {
		user := fmt.Sprintf("u%d", i)
		for _, tn := range c.nodes {
			if _, err := c.put(tn, user, "written while one disk is full"); err != nil {
				t.Fatalf("put for %s via %s: %v", user, tn.cfg.NodeID, err)
			}
		}
	}
	sick.disk.full.Store(false)
	if err := sick.WriteHealth(); err != nil {
		t.Fatalf("space is back: %v", err)
	}
}
