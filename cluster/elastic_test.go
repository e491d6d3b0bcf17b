package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/storage"
)

// balanced reports whether tn sees a healthy cluster with no move under way, every eligible node holding
// replicas within ±1 of each other and at least minLeaders leaders.
func (c *testCluster) balanced(tn *testNode, minLeaders int) (bool, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st := tn.Status(ctx)
	lo, hi, summary := -1, 0, ""
	for _, n := range st.Nodes {
		summary += fmt.Sprintf("%s:%s r%d l%d ", n.ID, n.State, n.Replicas, n.Leaders)
		if n.State != "alive" {
			continue
		}
		if n.Leaders < minLeaders {
			return false, summary
		}
		hi = max(hi, n.Replicas)
		if lo < 0 || n.Replicas < lo {
			lo = n.Replicas
		}
	}
	return st.Healthy && len(st.Moves) == 0 && hi-lo <= 1, summary + fmt.Sprintf("moves=%d healthy=%t", len(st.Moves), st.Healthy)
}

func (c *testCluster) waitBalanced(tn *testNode, minLeaders int, d time.Duration, what string) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, summary := c.balanced(tn, minLeaders)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out after %v waiting for %s: %s", d, what, summary)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Three nodes hold 16 shards × 3 with 100 users' memories; three more join. The planner moves replicas (each
// added as a non-voter, promoted once caught up, the old one removed after) until each of the six holds 8 ± 1
// replicas and at least 2 leaders, and every memory is readable through every node.
func TestJoinRebalances(t *testing.T) {
	cfg := testConfig()
	cfg.Shards = 16
	c := makeCluster(t, 3, cfg)
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")
	ids := map[string]string{}
	for u := range 100 {
		user := fmt.Sprintf("user-%03d", u)
		id, err := c.put(c.nodes[u%3], user, "memory of "+user)
		if err != nil {
			t.Fatal(err)
		}
		ids[user] = id
	}
	for i := 4; i <= 6; i++ {
		jc := cfg
		jc.NodeID = fmt.Sprintf("n%d", i)
		c.add(jc)
	}
	start := time.Now()
	c.waitBalanced(c.nodes[0], 2, 120*time.Second, "6 nodes balanced")
	t.Logf("balanced %v after the joins", time.Since(start).Round(time.Millisecond))
	waitFor(t, 60*time.Second, "replicas moved away to be dropped", func() bool {
		for _, tn := range c.nodes {
			if k := len(tn.LocalShards()); k < 7 || k > 9 {
				return false
			}
		}
		return true
	})
	t.Logf("old replicas dropped %v after the joins", time.Since(start).Round(time.Millisecond))
	for user, id := range ids {
		for _, tn := range c.nodes {
			if _, err := c.get(tn, user, id, false); err != nil {
				t.Fatalf("read %s through %s after the rebalance: %v", user, tn.cfg.NodeID, err)
			}
		}
	}
}

// A drained node gives up every replica and leadership while clients write through it and the others; no
// write fails. Removing it then leaves a healthy cluster; the removed node is told, stops serving, and its
// data dir refuses to start again.
func TestDrainThenRemove(t *testing.T) {
	cfg := testConfig()
	cfg.Shards = 8
	c := makeCluster(t, 4, cfg)
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")
	victim := c.nodes[3]
	var writes, failed atomic.Int64
	var lastErr atomic.Value
	stop := c.background(3, func(w int, done <-chan struct{}) {
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			if _, err := c.put(c.nodes[(w+i)%4], fmt.Sprintf("writer-%d-%d", w, i%20), "during the drain"); err != nil {
				failed.Add(1)
				lastErr.Store(err)
			}
			writes.Add(1)
		}
	})
	// The drain guard counts the nodes that the deciding node's gossip sees alive; a node that joined last may
	// not have reached its member list yet.
	waitFor(t, 30*time.Second, "n2 to see every node alive", func() bool { return len(c.nodes[1].liveMembers()) == 4 })
	ctx := ctxFor(t, 3*time.Minute)
	if _, err := c.nodes[1].SetNodeState(ctx, victim.cfg.NodeID, NodeDraining, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 120*time.Second, "the drained node to hold nothing", func() bool {
		st := c.nodes[0].Status(ctx)
		for _, n := range st.Nodes {
			if n.ID == victim.cfg.NodeID {
				return n.State == NodeDraining && n.Replicas == 0 && n.Leaders == 0 && len(st.Moves) == 0
			}
		}
		return false
	})
	stop()
	if failed.Load() > 0 {
		t.Fatalf("%d of %d writes failed during the drain; last: %v", failed.Load(), writes.Load(), lastErr.Load())
	}
	t.Logf("%d writes during the drain, none failed", writes.Load())
	// Draining the others now would leave too few nodes for 3 replicas: refused with a reason.
	if _, err := c.nodes[0].SetNodeState(ctx, "n3", NodeDraining, false); !errors.Is(err, ErrRefused) {
		t.Errorf("second drain: %v, want refused", err)
	}
	if _, err := c.nodes[0].SetNodeState(ctx, victim.cfg.NodeID, NodeRemoved, false); err != nil {
		t.Fatal(err)
	}
	c.waitHealthy(c.nodes[0], 30*time.Second, "a healthy cluster after the removal")
	waitFor(t, 30*time.Second, "the removed node to know it", func() bool { return victim.removed.Load() })
	if ok, why := victim.Ready(); ok || why != ErrRemoved.Error() {
		t.Errorf("removed node ready: %v %s", ok, why)
	}
	victim.stop()
	db, err := storage.Open(victim.dir+"/pebble", storage.Options{DiskCheckInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n, err := New(victim.cfg, db, nil)
	if err == nil {
		err = n.Start()
	}
	if !errors.Is(err, ErrRemoved) {
		t.Fatalf("a removed node restarted: %v", err)
	}
}

// Removing a live node that still holds replicas is refused without force, naming what would be lost.
func TestRemoveRefusedWhileHoldingData(t *testing.T) {
	c := makeCluster(t, 3, testConfig())
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")
	_, err := c.nodes[0].SetNodeState(ctxFor(t, 30*time.Second), "n2", NodeRemoved, false)
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("remove of a node holding replicas: %v", err)
	}
	if _, err := c.nodes[0].SetNodeState(ctxFor(t, 30*time.Second), "nope", NodeDraining, false); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("drain of an unknown node: %v", err)
	}
}

// An operator moves a shard's leadership to a chosen replica; with rebalancing paused it stays there.
func TestTransferLeader(t *testing.T) {
	c := makeCluster(t, 3, testConfig())
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.nodes[2].SetPaused(ctx, true); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the pause to reach every node", func() bool {
		for _, tn := range c.nodes {
			if !tn.MetaState().Paused {
				return false
			}
		}
		return true
	})
	const shard = 1
	var to string
	waitFor(t, 10*time.Second, "a known leader", func() bool {
		r, _ := c.nodes[0].Replica(shard)
		leader := r.Leader()
		for _, tn := range c.nodes {
			if leader != "" && tn.cfg.NodeID != leader {
				to = tn.cfg.NodeID
				return true
			}
		}
		return false
	})
	if err := c.nodes[0].TransferLeader(ctx, shard, to); err != nil {
		t.Fatal(err)
	}
	r, _ := c.nodes[1].Replica(shard)
	waitFor(t, 10*time.Second, "every replica to see the new leader", func() bool { return r.Leader() == to })
	if err := c.nodes[0].TransferLeader(ctx, shard, "nope"); !errors.Is(err, ErrRefused) {
		t.Errorf("transfer to a node without a replica: %v", err)
	}
}

// A meta voter dead past the timeout is replaced by a live member: the group keeps 3 live voters.
func TestDeadMetaVoterReplaced(t *testing.T) {
	c := makeCluster(t, 3, testConfig())
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")
	n4 := testConfig()
	n4.NodeID = "n4"
	c.add(n4)
	metaVoters := func(tn *testNode) []string {
		f := tn.mraft.raft.GetConfiguration()
		if f.Error() != nil {
			return nil
		}
		var out []string
		for _, s := range f.Configuration().Servers {
			if s.Suffrage == raft.Voter {
				out = append(out, string(s.ID))
			}
		}
		slices.Sort(out)
		return out
	}
	waitFor(t, 30*time.Second, "n4 in the meta group", func() bool {
		f := c.nodes[0].mraft.raft.GetConfiguration()
		return f.Error() == nil && slices.ContainsFunc(f.Configuration().Servers, func(s raft.Server) bool { return s.ID == "n4" })
	})
	if v := metaVoters(c.nodes[0]); len(v) != 3 {
		t.Fatalf("meta voters with 4 members: %v, want 3", v)
	}
	c.nodes[1].stop()
	t.Cleanup(func() {
		if t.Failed() { // what each live node saw, which the log tail (raft's heartbeat errors) may not show
			for _, tn := range []*testNode{c.nodes[0], c.nodes[2], c.nodes[3]} {
				if tn.Node != nil {
					t.Logf("%s: meta leader %v, meta voters %v, gossip %v", tn.cfg.NodeID, tn.IsMetaLeader(),
						metaVoters(tn), tn.memberStates())
				}
			}
		}
	})
	waitFor(t, 60*time.Second, "n2 replaced as a meta voter by n4", func() bool {
		for _, tn := range []*testNode{c.nodes[0], c.nodes[2], c.nodes[3]} {
			if slices.Equal(metaVoters(tn), []string{"n1", "n3", "n4"}) {
				return true
			}
		}
		return false
	})
}

// With --zone, rebalancing after joins keeps each shard's replicas in distinct zones.
func TestZonesKeepReplicasApart(t *testing.T) {
	base := testConfig()
	base.Shards = 8
	c := newTestCluster(t, base)
	for i, zone := range []string{"a", "b", "c"} {
		cfg := base
		cfg.NodeID, cfg.Zone, cfg.BootstrapExpect = fmt.Sprintf("n%d", i+1), zone, 3
		c.add(cfg)
	}
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")
	for i, zone := range []string{"a", "b", "c"} {
		cfg := base
		cfg.NodeID, cfg.Zone = fmt.Sprintf("n%d", i+4), zone
		c.add(cfg)
	}
	c.waitBalanced(c.nodes[0], 1, 120*time.Second, "6 nodes in 3 zones balanced")
	st := c.nodes[0].MetaState()
	for s, reps := range st.Placement {
		zones := map[string]bool{}
		for _, id := range reps {
			zones[st.Nodes[id].Zone] = true
		}
		if len(zones) != 3 {
			t.Errorf("shard %d: replicas %v in zones %v", s, reps, zones)
		}
	}
}
