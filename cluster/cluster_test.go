package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	dto "github.com/prometheus/client_model/go"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/retrieval"
	"github.com/memcluster/memcluster/storage"
)

func TestClusterFormsAndServesWritesFromEveryNode(t *testing.T) {
	c := makeCluster(t, 3, testConfig())
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")
	// Every member reads this build's newest record and command formats, so each node's proposals write them
	// (records.go).
	for _, tn := range c.nodes {
		waitFor(t, 20*time.Second, tn.ID()+" to write the newest formats", func() bool {
			return tn.RecordFormat() == storage.RecordNewest && tn.CommandFormat() == storage.CommandNewest
		})
	}

	// Every node takes writes at once (a node still applying the cluster's formation waits, it does not fail); each write lands on its shard's leader wherever that is.
	type written struct{ user, id string }
	var mu sync.Mutex
	var all []written
	var wg sync.WaitGroup
	for i, tn := range c.nodes {
		wg.Add(1)
		go func(i int, tn *testNode) {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				user := fmt.Sprintf("user-%d-%d", i, j%5)
				id, err := c.put(tn, user, fmt.Sprintf("memory %d from node %d", j, i))
				if err != nil {
					t.Errorf("put via %s: %v", tn.ID(), err)
					return
				}
				mu.Lock()
				all = append(all, written{user, id})
				mu.Unlock()
			}
		}(i, tn)
	}
	wg.Wait()
	// Linearizable reads: every acknowledged write is visible from every node at once.
	for _, tn := range c.nodes {
		for _, w := range all {
			if _, err := c.get(tn, w.user, w.id, false); err != nil {
				t.Fatalf("read %s/%s via %s: %v", w.user, w.id, tn.ID(), err)
			}
		}
	}
	// Every replica converges: stale reads from each node's local replica find everything.
	for _, tn := range c.nodes {
		waitFor(t, 30*time.Second, "replicas to apply", func() bool {
			for _, w := range all {
				if _, err := c.get(tn, w.user, w.id, true); err != nil {
					return false
				}
			}
			return true
		})
	}
	// Search runs on the shard's indexes and is scoped to the user.
	shard, _ := c.nodes[1].ShardFor(ctxFor(t, 30*time.Second), "user-0-0")
	q := retrieval.NewQuery("user-0-0", "memory node")
	q.MinScore = 0
	res, err := c.nodes[1].Search(ctxFor(t, 30*time.Second), shard, q, false)
	if err != nil || len(res) == 0 {
		t.Fatalf("search: %v, %d results", err, len(res))
	}
	for _, r := range res {
		if r.Memory.UserID != "user-0-0" {
			t.Fatalf("search for user-0-0 returned a memory of %s", r.Memory.UserID)
		}
	}
}

func TestLeaderLossWritesResumeAndNodeCatchesUp(t *testing.T) {
	c := makeCluster(t, 3, testConfig())
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")
	const user = "alice"
	shard, _ := c.nodes[0].ShardFor(ctxFor(t, 30*time.Second), user)
	var leader *testNode
	waitFor(t, 40*time.Second, "a shard leader", func() bool {
		for _, tn := range c.nodes {
			if r, ok := tn.Replica(shard); ok && r.IsLeader() {
				leader = tn
				return true
			}
		}
		return false
	})
	var others []*testNode
	for _, tn := range c.nodes {
		if tn != leader {
			others = append(others, tn)
		}
	}
	if _, err := c.put(others[0], user, "before the crash"); err != nil {
		t.Fatal(err)
	}
	leader.stop()
	start := time.Now()
	var ids []string
	for i := 0; i < 30; i++ {
		id, err := c.put(others[i%2], user, fmt.Sprintf("after the crash %d", i))
		if err != nil {
			t.Fatalf("write %d after leader loss: %v", i, err)
		}
		ids = append(ids, id)
	}
	t.Logf("30 writes after leader loss done in %v", time.Since(start))
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("writes took %v to resume", d)
	}
	c.restart(leader)
	waitFor(t, 40*time.Second, "the restarted node to catch up", func() bool {
		for _, id := range ids {
			if _, err := c.get(leader, user, id, true); err != nil {
				return false
			}
		}
		return true
	})
	c.waitHealthy(leader, 40*time.Second, "a healthy cluster after restart")
}

func TestDeadNodeReplicasArePlacedElsewhere(t *testing.T) {
	cfg := testConfig()
	c := makeCluster(t, 4, cfg)
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")
	victim := c.nodes[3]
	victim.stop()
	survivor := c.nodes[0]
	waitFor(t, 30*time.Second, "placement without the dead node", func() bool {
		st := survivor.MetaState()
		for _, reps := range st.Placement {
			for _, id := range reps {
				if id == victim.cfg.NodeID {
					return false
				}
			}
			if len(reps) != 3 {
				return false
			}
		}
		return true
	})
	c.waitHealthy(survivor, 60*time.Second, "every shard back to 3 live replicas")
	if _, err := c.put(survivor, "bob", "still writable"); err != nil {
		t.Fatal(err)
	}
}

func TestJoiningNodesTakeUnderReplicatedShards(t *testing.T) {
	cfg := testConfig()
	// Force snapshot installs onto the newcomers: snapshots every 16 entries, checked often, and a log
	// compacted to its last 4 entries after each.
	cfg.SnapshotThreshold, cfg.ShardSnapshotInterval, cfg.ShardTrailingLogs = 16, 100*time.Millisecond, 4
	c := newTestCluster(t, cfg)
	first := cfg
	first.NodeID, first.BootstrapExpect = "n1", 1
	n1 := c.add(first)
	waitFor(t, 30*time.Second, "a one-node cluster", func() bool {
		st := n1.MetaState()
		return st.Initialized() && n1.Replicas() == 4
	})
	var ids []string
	for i := 0; i < 100; i++ {
		id, err := c.put(n1, "carol", fmt.Sprintf("early memory %d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// carol's shard snapshots past her memories and compacts its log: the newcomers cannot catch up from it.
	// Its snapshots are markers; the one sent is materialized from the leader's state.
	waitFor(t, 30*time.Second, "a snapshot past carol's memories", func() bool {
		for shard := uint32(0); shard < 4; shard++ {
			snaps, err := raft.NewFileSnapshotStore(SnapshotDir(n1.dir, shard), 2, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			metas, _ := snaps.List()
			if len(metas) > 0 && metas[0].Index >= 90 {
				if metas[0].Size != storage.LazySnapshotSize {
					t.Fatalf("shard %d's snapshot holds %d bytes, want a marker", shard, metas[0].Size)
				}
				return true
			}
		}
		return false
	})
	for _, id := range []string{"n2", "n3"} {
		jc := cfg
		jc.NodeID = id
		c.add(jc)
	}
	c.waitHealthy(n1, 40*time.Second, "three replicas per shard")
	for _, tn := range c.nodes[1:] {
		waitFor(t, 40*time.Second, "newcomer to hold the data", func() bool {
			for _, id := range ids {
				if _, err := c.get(tn, "carol", id, true); err != nil {
					return false
				}
			}
			return true
		})
	}
	// A newcomer whose replica has not caught up yet forwards its reads to the leader, so the reads above can pass
	// before the snapshot is sent: wait for it.
	waitFor(t, 30*time.Second, "a snapshot marker materialized for the newcomers", func() bool {
		var m dto.Metric
		if err := n1.metrics.snapshotsMaterialized.Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.GetCounter().GetValue() > 0
	})
}

func TestMissingMemoryIsNotFoundOnEveryNode(t *testing.T) {
	c := makeCluster(t, 3, testConfig())
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")
	for _, tn := range c.nodes {
		if _, err := c.get(tn, "nobody", "01ARZ3NDEKTSV4RRFFQ69G5FAV", false); !errors.Is(err, memory.ErrNotFound) {
			t.Fatalf("via %s: got %v, want ErrNotFound", tn.ID(), err)
		}
	}
}

// A read forwarded to its shard's leader that gets no answer before the request's deadline (the leader busy, or
// cut off) fails as a deadline passed, not as a shard without a leader.
func TestForwardedReadTimeoutIsNotNoLeader(t *testing.T) {
	c := makeCluster(t, 3, testConfig())
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")
	shard, err := c.nodes[0].ShardFor(ctxFor(t, 30*time.Second), "slow-user")
	if err != nil {
		t.Fatal(err)
	}
	var coord *testNode
	for _, tn := range c.nodes {
		if r, ok := tn.Replica(shard); !ok || !r.IsLeader() {
			coord = tn
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err = coord.onShard(ctx, shard, "search", false, func(context.Context, *Replica) error {
		return errors.New("asked locally on a node that does not lead the shard")
	}, func(ctx context.Context, _ string) error {
		<-ctx.Done()
		return &rpcError{Code: "unreachable", Message: ctx.Err().Error()}
	})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrNoLeader) {
		t.Fatalf("a forwarded read past its deadline: %v; want the deadline, not ErrNoLeader", err)
	}
}

// A node that stops right after its first join, before its meta state lists the members (here the cluster never
// formed), still rejoins from what it remembers when restarted without --join.
func TestRestartRejoinsBeforeTheClusterFormed(t *testing.T) {
	cfg := testConfig()
	c := newTestCluster(t, cfg)
	for _, id := range []string{"n1", "n2"} {
		nc := cfg
		nc.NodeID, nc.BootstrapExpect = id, 3 // a third node never comes: the cluster does not form
		c.add(nc)
	}
	n1, n2 := c.nodes[0], c.nodes[1]
	waitFor(t, 30*time.Second, "n1 to see n2", func() bool { return len(n1.liveMembers()) == 2 })
	n2.stop()
	waitFor(t, 30*time.Second, "n1 to see n2 leave", func() bool { return len(n1.liveMembers()) == 1 })
	c.restart(n2)
	waitFor(t, 30*time.Second, "n2 to rejoin", func() bool {
		return len(n1.liveMembers()) == 2 && len(n2.liveMembers()) == 2
	})
}

// A proposal forwarded to its shard's leader whose wait for the answer ends is of unknown outcome (the leader may
// have taken it): not a shard without a leader, which a client retries.
func TestForwardedWriteTimeoutIsOutcomeUnknown(t *testing.T) {
	c := makeCluster(t, 3, testConfig())
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")
	const user = "held-user"
	shard, err := c.nodes[0].ShardFor(ctxFor(t, 30*time.Second), user)
	if err != nil {
		t.Fatal(err)
	}
	var leader, coord *testNode
	for _, tn := range c.nodes {
		if r, ok := tn.Replica(shard); ok && r.IsLeader() {
			leader = tn
		} else {
			coord = tn
		}
	}
	if leader == nil || coord == nil {
		t.Fatalf("shard %d: leader %v, another node %v", shard, leader != nil, coord != nil)
	}
	leader.holdProposals.Store(int64(2 * time.Second))
	cmd, _ := putCmdAs(t, coord.RecordFormat(), user, "held by its leader")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := coord.Propose(ctx, shard, cmd); !errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("forwarded proposal past its deadline: %v, want ErrOutcomeUnknown", err)
	}
}

// A hint naming the coordinator itself (another replica answered "not leader, ask n1" while n1 led the shard,
// and the shard has moved off n1 since), or a node no longer known (removed since it was named), is out of date:
// the coordinator asks the placement instead of failing every request for the shard with "no leader" until
// something else replaced the hint.
func TestStaleLeaderHintIsDropped(t *testing.T) {
	for _, hint := range []string{"self", "removed-node"} {
		t.Run(hint, func(t *testing.T) { staleHint(t, hint) })
	}
}

// staleHint sets a coordinator's hint for a shard it holds no replica of to hint ("self": the coordinator
// itself) and puts through it.
func staleHint(t *testing.T, hint string) {
	cfg := testConfig()
	cfg.Replicas = 1
	c := makeCluster(t, 3, cfg)
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")
	const user = "hinted-user"
	shard, err := c.nodes[0].ShardFor(ctxFor(t, 30*time.Second), user)
	if err != nil {
		t.Fatal(err)
	}
	var coord *testNode
	for _, tn := range c.nodes {
		if _, ok := tn.Replica(shard); !ok {
			coord = tn
		}
	}
	if coord == nil {
		t.Fatalf("shard %d has a replica on every node", shard)
	}
	if hint == "self" {
		hint = coord.cfg.NodeID
	}
	coord.mu.Lock()
	coord.leaderHint[shard] = hint
	coord.mu.Unlock()
	cmd, _ := putCmdAs(t, coord.RecordFormat(), user, "routed past a stale hint")
	if u := coord.LeaderURL(shard); strings.Contains(u, coord.cfg.HTTPAddr) {
		t.Fatalf("LeaderURL names the coordinator from its stale hint: %s", u)
	}
	if _, err := coord.Propose(ctxFor(t, 10*time.Second), shard, cmd); err != nil {
		t.Fatalf("propose with the hint %q: %v", hint, err)
	}
	coord.mu.RLock()
	left := coord.leaderHint[shard]
	coord.mu.RUnlock()
	if left == hint {
		t.Fatalf("the hint still names %s", hint)
	}
}
