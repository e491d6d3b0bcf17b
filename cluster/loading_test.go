package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/retrieval"
)

// A restarted node is ready, and its replicas take part in their groups, while their indexes are still loading;
// a replica elected meanwhile hands its leadership on, so writes keep being acknowledged; once loaded, the
// replicas apply what their groups committed meanwhile, and a search of them finds it.
func TestRestartedReplicasRunWhileTheirIndexesLoad(t *testing.T) {
	c := makeCluster(t, 3, testConfig())
	n1, n3 := c.nodes[0], c.nodes[2]
	c.waitHealthy(n1, 60*time.Second, "the cluster to form")
	users := []string{"ada", "bob", "cyd", "dee", "eve", "fay"}
	for i, u := range users {
		if _, err := c.put(n1, u, fmt.Sprintf("before the restart %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	n3.stop()
	gate := make(chan struct{})
	n3.indexGate = gate
	c.restart(n3)
	waitFor(t, 60*time.Second, "n3 ready while none of its indexes has loaded", func() bool {
		ok, _ := n3.Ready()
		return ok
	})
	if len(n3.LocalShards()) == 0 {
		t.Fatal("n3 holds no replica after its restart")
	}
	for _, rr := range n3.Report().Replicas {
		if !rr.IndexesLoading || rr.Memories != -1 {
			t.Fatalf("shard %d: indexes_loading=%t memories=%d, want true and -1 (not known)", rr.Shard, rr.IndexesLoading,
				rr.Memories)
		}
	}
	loading := func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		for _, s := range n1.Status(ctx).Shards {
			for _, p := range s.Progress {
				if p.Node == "n3" && p.IndexesLoading {
					return true
				}
			}
		}
		return false
	}
	waitFor(t, 30*time.Second, "the cluster's status to show n3's indexes loading", loading)

	// Made leader of a shard by an operator, the loading replica hands the leadership on.
	shard, err := n1.ShardFor(ctxFor(t, 30*time.Second), users[0])
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	err = n1.TransferLeader(ctx, shard, "n3")
	cancel()
	if err != nil {
		t.Logf("transfer to n3: %v (it may have handed the leadership on before the transfer saw it)", err)
	}
	r3, _ := n3.Replica(shard)
	waitFor(t, 30*time.Second, "n3 to hand on the leadership of a shard while loading", func() bool {
		return !r3.IsLeader() && r3.Leader() != ""
	})

	// Writes through the loading node are forwarded and acknowledged; n3's groups take their entries.
	wrote := map[string]string{}
	for i, u := range users {
		id, err := c.put(n3, u, fmt.Sprintf("while loading zebra%d", i))
		if err != nil {
			t.Fatalf("put through n3 while its indexes load: %v", err)
		}
		wrote[u] = id
	}
	// More batches than raft queues for a state machine: a loading replica that waited in its indexer would stop
	// taking appends after 128 of them; it keeps them for its indexes instead, and its log keeps up.
	for i := range 200 {
		if _, err := c.put(n1, users[0], fmt.Sprintf("burst %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	rl, _ := n1.Replica(shard)
	if !rl.IsLeader() {
		rl, _ = c.nodes[1].Replica(shard)
	}
	want := rl.raft.CommitIndex()
	waitFor(t, 30*time.Second, "n3's log to take the burst while its indexes load", func() bool {
		return r3.raft.LastIndex() >= want && r3.FSM.AppliedIndex() >= want
	})
	if !r3.indexesLoading() {
		t.Fatal("n3's indexes loaded before the gate opened")
	}
	// A search of a loading replica waits for it, within its context.
	ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, err = n3.searchLocal(ctx, r3, textQuery(users[0], "zebra0"), true)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stale search of a loading replica: %v, want a deadline error", err)
	}

	close(gate)
	waitFor(t, 60*time.Second, "n3's indexes to load", func() bool { return !loading() })
	for i, u := range users {
		shard, err := n3.ShardFor(ctxFor(t, 30*time.Second), u)
		if err != nil {
			t.Fatal(err)
		}
		r, ok := n3.Replica(shard)
		if !ok {
			t.Fatalf("n3 has no replica of shard %d", shard)
		}
		// Stale: a follower's full-text index may lag its applies by the feeder's linger (seconds).
		waitFor(t, 30*time.Second, fmt.Sprintf("n3's replica of shard %d to find %s's write made while it loaded", shard, u),
			func() bool {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				res, err := n3.searchLocal(ctx, r, textQuery(u, fmt.Sprintf("zebra%d", i)), true)
				return err == nil && len(res) > 0 && res[0].Memory.ID == wrote[u]
			})
	}
}

// A replica whose indexes fail to load behind its group halts; the node says why it is not ready, and the shard
// keeps taking writes on its other replicas.
func TestReplicaWhoseIndexesFailToLoadHalts(t *testing.T) {
	c := makeCluster(t, 3, testConfig())
	n1, n3 := c.nodes[0], c.nodes[2]
	c.waitHealthy(n1, 60*time.Second, "the cluster to form")
	n3.stop()
	n3.indexErr = errors.New("disk says no")
	c.restart(n3)
	waitFor(t, 60*time.Second, "n3's replicas to halt", func() bool {
		reps := n3.Report().Replicas
		for _, rr := range reps {
			if !rr.Halted {
				return false
			}
		}
		return len(reps) > 0
	})
	if ok, why := n3.Ready(); ok || !strings.Contains(why, "indexes failed to load") {
		t.Fatalf("n3 ready=%t (%q), want not ready, naming the failed load", ok, why)
	}
	if _, err := c.put(n1, "ada", "after the failed load"); err != nil {
		t.Fatalf("put on the two healthy replicas: %v", err)
	}
}

// textQuery asks for memories by their words alone, whatever their score.
func textQuery(user, text string) retrieval.Query {
	q := retrieval.NewQuery(user, text)
	q.VectorWeight, q.TextWeight, q.MinScore = 0, 1, 0
	return q
}
