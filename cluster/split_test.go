package cluster

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/shardmap"
)

// splitUsers returns n users, at least half of them in shard of a 4-shard cluster.
func splitUsers(n, shard int) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		u := fmt.Sprintf("user-%03d", i)
		if ShardFor(u, 4) == uint32(shard) || len(out) >= n/2 {
			out = append(out, u)
		}
	}
	return out
}

// acked is the memories whose writes were acknowledged, by user.
type acked struct {
	mu  sync.Mutex
	ids map[string][]string
}

func (a *acked) add(user, id string) {
	a.mu.Lock()
	a.ids[user] = append(a.ids[user], id)
	a.mu.Unlock()
}

// writeUntil has one writer per node put memories of random users until stop is called (or the test ends);
// failed says how many writes failed.
func (c *testCluster) writeUntil(users []string, a *acked) (failed func() int64, stop func()) {
	var fails atomic.Int64
	stop = c.background(len(c.nodes), func(w int, done <-chan struct{}) {
		tn := c.nodes[w]
		r := rand.New(rand.NewPCG(uint64(w), 7))
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			u := users[r.IntN(len(users))]
			id, err := c.put(tn, u, fmt.Sprintf("note %d of writer %d", i, w))
			if err != nil {
				fails.Add(1)
				c.t.Logf("write through %s for %s failed: %v", tn.cfg.NodeID, u, err)
				continue
			}
			a.add(u, id)
		}
	})
	return fails.Load, stop
}

// readUntil reads acknowledged memories through every node until stopped, and counts the reads that found
// nothing: linearizable reads must find every acknowledged memory, across a split too. Other errors (a
// leader moving, a timeout) are the writers' kind of failure, and only logged.
func (c *testCluster) readUntil(a *acked) (missed func() int64, stop func()) {
	var misses atomic.Int64
	stop = c.background(len(c.nodes), func(w int, done <-chan struct{}) {
		tn := c.nodes[w]
		r := rand.New(rand.NewPCG(uint64(w), 11))
		for {
			select {
			case <-done:
				return
			default:
			}
			u, id := a.pick(r)
			if u == "" {
				continue
			}
			_, err := c.get(tn, u, id, false)
			switch {
			case errors.Is(err, memory.ErrNotFound):
				misses.Add(1)
				c.t.Logf("read of %s of %s through %s found nothing: %v", id, u, tn.cfg.NodeID, err)
			case err != nil:
				c.t.Logf("read of %s of %s through %s failed: %v", id, u, tn.cfg.NodeID, err)
			}
		}
	})
	return misses.Load, stop
}

// pick returns an acknowledged memory at random ("" when there is none yet).
func (a *acked) pick(r *rand.Rand) (user, id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := r.IntN(len(a.ids) + 1)
	for u, ids := range a.ids {
		if n--; n <= 0 && len(ids) > 0 {
			return u, ids[r.IntN(len(ids))]
		}
	}
	return "", ""
}

// A shard splits while three writers write through every node: the shard count grows by one, no write
// fails, and every acknowledged memory is readable through every node and stored exactly once, on the shard
// whose range holds its user.
func TestSplitShardUnderWrites(t *testing.T) {
	c := makeCluster(t, 3, testConfig())
	c.waitHealthy(c.nodes[0], 30*time.Second, "the cluster to form")
	users := splitUsers(24, 1)
	a := &acked{ids: map[string][]string{}}
	failed, stop := c.writeUntil(users, a)
	waitFor(t, 10*time.Second, "writes before the split", func() bool { return len(a.snapshot()) >= 8 })
	missed, stopReads := c.readUntil(a)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	res, err := c.nodes[1].SplitShard(ctx, 1, true)
	if err != nil {
		t.Fatalf("split: %v", err)
	}
	t.Logf("shard 1 → %d in %v, ranges %v / %v", res.Child, time.Since(start), res.Range, res.ChildRange)
	if res.Child != 4 || !res.Done || res.Shards != 5 {
		t.Fatalf("split answered %+v, want child 4 done with 5 shards", res)
	}
	after := a.count()
	waitFor(t, 20*time.Second, "writes after the split", func() bool { return a.count() >= after+60 })
	stop()
	stopReads()
	if f := failed(); f != 0 {
		t.Fatalf("%d writes failed during the split", f)
	}
	if m := missed(); m != 0 {
		t.Fatalf("%d reads of acknowledged memories found nothing during the split", m)
	}
	c.waitHealthy(c.nodes[0], 30*time.Second, "a healthy cluster after the split")

	st := c.nodes[0].MetaState()
	moved := 0
	for _, u := range users {
		if st.Route(u) == 4 {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("no user moved to the new shard")
	}
	c.checkStoredOnce(a)
	t.Logf("%d acknowledged memories of %d users (%d moved to shard 4) read through every node", a.count(), len(users), moved)
}

func (a *acked) snapshot() map[string][]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string][]string{}
	for u, ids := range a.ids {
		out[u] = append([]string(nil), ids...)
	}
	return out
}

func (a *acked) count() int {
	n := 0
	for _, ids := range a.snapshot() {
		n += len(ids)
	}
	return n
}

// checkStoredOnce reads every acknowledged memory through every node and checks that, on every node, each
// memory is stored once, in the shard that owns its user, once every replica has caught up.
func (c *testCluster) checkStoredOnce(a *acked) {
	c.t.Helper()
	want := a.snapshot()
	for _, tn := range c.nodes {
		for u, ids := range want {
			for _, id := range ids {
				if _, err := c.get(tn, u, id, false); err != nil {
					c.t.Fatalf("memory %s of %s through %s: %v", id, u, tn.cfg.NodeID, err)
				}
			}
		}
	}
	total := a.count()
	st := c.nodes[0].MetaState()
	m, err := shardmap.New(uint32(st.Buckets), st.Ranges)
	if err != nil {
		c.t.Fatal(err)
	}
	for _, tn := range c.nodes {
		var last string
		waitFor(c.t, 20*time.Second, "every replica of "+tn.cfg.NodeID+" to hold each memory once", func() bool {
			seen, where := map[string]int{}, ""
			for _, s := range tn.LocalShards() {
				_ = tn.db.ScanShard(s, func(mm memory.Memory) bool {
					seen[mm.ID]++
					if m.Lookup(mm.UserID) != s {
						where = fmt.Sprintf("memory %s of %s on shard %d, owned by %d", mm.ID, mm.UserID, s, m.Lookup(mm.UserID))
					}
					return true
				})
			}
			dups := 0
			for _, n := range seen {
				if n > 1 {
					dups++
				}
			}
			last = fmt.Sprintf("%d stored, %d acknowledged, %d duplicated; %s", len(seen), total, dups, where)
			return dups == 0 && where == "" && len(seen) >= total
		})
		c.t.Logf("%s: %s", tn.cfg.NodeID, last)
	}
}

// With SplitAboveMemories set, the meta leader splits a shard that grows past it, by itself.
func TestAutomaticSplit(t *testing.T) {
	cfg := testConfig()
	cfg.Shards, cfg.SplitAboveMemories = 2, 30
	c := makeCluster(t, 3, cfg)
	c.waitHealthy(c.nodes[0], 30*time.Second, "the cluster to form")
	a := &acked{ids: map[string][]string{}}
	for i := range 80 {
		u := fmt.Sprintf("user-%02d", i%16)
		id, err := c.put(c.nodes[i%3], u, fmt.Sprintf("memory %d", i))
		if err != nil {
			t.Fatalf("put: %v", err)
		}
		a.add(u, id)
	}
	waitFor(t, 90*time.Second, "automatic splits until no shard holds more than 30", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		st := c.nodes[0].Status(ctx)
		for _, s := range st.Shards {
			if s.Memories < 0 || s.Memories > 30 {
				return false
			}
		}
		return st.Healthy && st.Split == nil && len(st.Shards) > 2
	})
	c.checkStoredOnce(a)
	t.Logf("shards now %d", c.nodes[0].MetaState().Shards)
}

// After a split, replicas of both shards move: a node joins and another is drained, so the parent's and the
// child's replicas arrive on the new node in either order (a parent replica added after the split replays the
// split entry from the leader's log). Every shard's replicas end up holding the same memories, and each
// acknowledged memory is readable.
func TestSplitThenMoves(t *testing.T) {
	c := makeCluster(t, 3, testConfig())
	c.waitHealthy(c.nodes[0], 30*time.Second, "the cluster to form")
	users := splitUsers(16, 1)
	a := &acked{ids: map[string][]string{}}
	write := func(n int) {
		for i := range n {
			u := users[i%len(users)]
			id, err := c.put(c.nodes[i%3], u, fmt.Sprintf("memory %d", i))
			if err != nil {
				t.Fatalf("put: %v", err)
			}
			a.add(u, id)
		}
	}
	write(40)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := c.nodes[0].SplitShard(ctx, 1, true); err != nil {
		t.Fatal(err)
	}
	write(120) // the child's log grows well past its first entry
	cfg := c.base
	cfg.NodeID = "n4"
	c.add(cfg)
	waitFor(t, 30*time.Second, "n1 draining (refused until n4 is a live member)", func() bool {
		_, err := c.nodes[1].SetNodeState(ctx, "n1", NodeDraining, false)
		return err == nil
	})
	waitFor(t, 120*time.Second, "n1 drained onto n4", func() bool {
		st := c.nodes[1].Status(ctx)
		for _, n := range st.Nodes {
			if n.ID == "n1" {
				return n.Replicas == 0 && n.Leaders == 0 && len(st.Moves) == 0 && st.Healthy
			}
		}
		return false
	})
	write(20)
	c.replicasAgree(a)
}

// replicasAgree waits until every placed replica of every shard holds the same memories, all of them owned by
// the shard, and reads every acknowledged memory.
func (c *testCluster) replicasAgree(a *acked) {
	c.t.Helper()
	byID := map[string]*testNode{}
	for _, tn := range c.nodes {
		byID[tn.cfg.NodeID] = tn
	}
	var last string
	waitFor(c.t, 30*time.Second, "every shard's replicas to agree", func() bool {
		st := c.nodes[1].MetaState()
		for s, placed := range st.Placement {
			var want string
			for _, id := range placed {
				tn := byID[id]
				if tn == nil || tn.Node == nil {
					continue
				}
				var ids []string
				_ = tn.db.ScanShard(uint32(s), func(m memory.Memory) bool {
					ids = append(ids, m.UserID+"/"+m.ID)
					if st.Owner(m.UserID) != uint32(s) {
						ids = append(ids, "(not owned)")
					}
					return true
				})
				got := fmt.Sprint(ids)
				if want == "" {
					want = got
				} else if got != want {
					last = fmt.Sprintf("shard %d: %s holds %d entries, %s %d", s, id, len(ids), placed[0], len(want))
					return false
				}
			}
		}
		return true
	})
	c.t.Logf("replicas agree (last difference seen: %q)", last)
	for u, ids := range a.snapshot() {
		for _, id := range ids {
			if _, err := c.get(c.nodes[1], u, id, false); err != nil {
				c.t.Fatalf("memory %s of %s: %v", id, u, err)
			}
		}
	}
}
