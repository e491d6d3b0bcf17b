package cluster

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// A long stream of deletes, each with its own request id, leaves a bounded number of request results on every
// replica: shard leaders prune those past the retention, and every replica deletes the same ones. Once the
// stream stops, every result is pruned.
func TestRequestResultsStayBounded(t *testing.T) {
	cfg := testConfig()
	cfg.Shards = 2
	cfg.RequestRetention = time.Second
	c := makeCluster(t, 3, cfg)
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")

	type replica struct {
		node  string
		shard uint32
	}
	// counts reads the request results of every replica of every node.
	counts := func() map[replica]int {
		out := map[replica]int{}
		for _, tn := range c.nodes {
			for _, s := range tn.LocalShards() {
				n, err := tn.db.RequestResults(s)
				if err != nil {
					t.Errorf("count request results of %s shard %d: %v", tn.ID(), s, err)
				}
				out[replica{tn.ID(), s}] = n
			}
		}
		return out
	}

	const stream = 6 * time.Second
	ids := memory.NewIDSource()
	start := time.Now()
	var issued, failed atomic.Int64
	perShard := make([]atomic.Int64, cfg.Shards)
	var wg sync.WaitGroup
	for w := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tn := c.nodes[w%len(c.nodes)]
			for i := 0; time.Since(start) < stream; i++ {
				user := fmt.Sprintf("user-%d-%d", w, i%7)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				shard, err := tn.ShardFor(ctx, user)
				if err == nil {
					var cmd []byte
					cmd, err = storage.EncodeDelete(storage.DeletePayload{UserID: user, IDs: []string{ids.New(time.Now())},
						RequestID: ids.New(time.Now())})
					if err == nil {
						_, err = tn.Propose(ctx, shard, cmd)
					}
					if err == nil {
						perShard[shard].Add(1)
					}
				}
				cancel()
				if err != nil {
					failed.Add(1) // a leader change under -race: the result may or may not be there
					continue
				}
				issued.Add(1)
			}
		}()
	}

	// Sample every replica while the stream runs; keep the largest count of its second half.
	maxSecondHalf := map[replica]int{}
	maxAll := map[replica]int{}
	for time.Since(start) < stream {
		late := time.Since(start) > stream/2
		for r, n := range counts() {
			maxAll[r] = max(maxAll[r], n)
			if late {
				maxSecondHalf[r] = max(maxSecondHalf[r], n)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	wg.Wait()
	elapsed := time.Since(start)
	t.Logf("deletes: %d acknowledged in %v (%.0f/s), %d failed; per shard %d, %d", issued.Load(),
		elapsed.Round(time.Millisecond), float64(issued.Load())/elapsed.Seconds(), failed.Load(),
		perShard[0].Load(), perShard[1].Load())
	if issued.Load() < 200 {
		t.Fatalf("only %d deletes went through: too few to show anything", issued.Load())
	}
	if len(maxSecondHalf) != cfg.Shards*len(c.nodes) {
		t.Fatalf("sampled %d replicas, want %d", len(maxSecondHalf), cfg.Shards*len(c.nodes))
	}
	for r, m := range maxSecondHalf {
		total := perShard[r.shard].Load()
		t.Logf("%s shard %d: at most %d request results in the second half (%d over the whole stream) of %d deletes",
			r.node, r.shard, m, maxAll[r], total)
		// Without pruning a replica holds every result ever made by the end of the stream. With a 1 s retention
		// and a check every second, results live about 2 s of a 6 s stream.
		if int64(m) > total*2/3 {
			t.Errorf("%s shard %d: %d request results of %d deletes: not bounded by the retention", r.node, r.shard, m, total)
		}
	}

	// After the stream every result passes the retention and is pruned on every replica.
	stopped := time.Now()
	waitFor(t, 30*time.Second, "every replica to prune every request result", func() bool {
		for _, n := range counts() {
			if n != 0 {
				return false
			}
		}
		return true
	})
	t.Logf("every replica holds 0 request results %v after the stream", time.Since(stopped).Round(10*time.Millisecond))
	var pruned float64
	for _, tn := range c.nodes {
		var m dto.Metric
		if err := tn.metrics.prunedResults.Write(&m); err != nil {
			t.Fatal(err)
		}
		pruned += m.GetCounter().GetValue()
	}
	t.Logf("memcluster_request_results_pruned_total over the nodes: %.0f", pruned)
	if pruned < float64(issued.Load()) {
		t.Errorf("pruned counter %.0f, want at least the %d acknowledged deletes", pruned, issued.Load())
	}
}

// A leader does not propose a prune while a member of its shard reports an older build (which would halt on
// the entry), and prunes once every member applies it: a rolling upgrade starts pruning with its last node.
func TestPruneWaitsForEveryMember(t *testing.T) {
	cfg := testConfig()
	cfg.Shards = 1
	cfg.RequestRetention = time.Second
	c := makeCluster(t, 3, cfg)
	for _, tn := range c.nodes {
		tn.oldBuild.Store(true)
	}
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")

	ids := memory.NewIDSource()
	const deletes = 50
	for i := range deletes {
		cmd, err := storage.EncodeDelete(storage.DeletePayload{UserID: "u", IDs: []string{"gone"},
			RequestID: ids.New(time.Now())})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err = c.nodes[i%3].Propose(ctx, 0, cmd)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	results := func() []int {
		var out []int
		for _, tn := range c.nodes {
			n, err := tn.db.RequestResults(0)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
		return out
	}
	waitFor(t, 10*time.Second, "every replica to apply the deletes", func() bool {
		for _, n := range results() {
			if n != deletes {
				return false
			}
		}
		return true
	})
	// The results pass the retention and the leader checks several times, but a follower's report is a build
	// before CmdPrune: none may be pruned. (Absence needs time to pass: three check intervals past the
	// retention.) The node posing as old must not lead: a real old build never proposes a prune.
	var old *testNode
	for _, tn := range c.nodes {
		if len(tn.LeaderShards()) == 0 {
			old = tn
		}
	}
	if old == nil {
		t.Fatal("no follower of shard 0")
	}
	for _, tn := range c.nodes {
		tn.oldBuild.Store(tn == old)
	}
	// If the node posing as old takes a leadership meanwhile, it is handed to another node and the window starts
	// over (a few times at most): skipping would hide a failure.
	for attempt := 0; ; attempt++ {
		moved := false
		for end := time.Now().Add(cfg.RequestRetention + 3*pruneEvery(cfg.RequestRetention)); time.Now().Before(end) && !moved; {
			moved = len(old.LeaderShards()) > 0
			time.Sleep(50 * time.Millisecond)
		}
		if !moved {
			break
		}
		if attempt == 4 {
			t.Fatalf("%s, posing as an old build, kept taking the leadership: the check could not run", old.ID())
		}
		for _, s := range old.LeaderShards() {
			to := c.nodes[0]
			if to == old {
				to = c.nodes[1]
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := to.TransferLeader(ctx, s, to.ID()); err != nil {
				t.Logf("hand shard %d's leadership away from %s: %v", s, old.ID(), err)
			}
			cancel()
		}
	}
	for i, n := range results() {
		if n != deletes {
			t.Fatalf("%s holds %d request results of %d: pruned while %s reports a build that halts on prunes",
				c.nodes[i].ID(), n, deletes, old.ID())
		}
	}
	for _, tn := range c.nodes {
		var m dto.Metric
		_ = tn.metrics.prunedResults.Write(&m)
		if v := m.GetCounter().GetValue(); v != 0 {
			t.Fatalf("%s counted %.0f pruned results", tn.ID(), v)
		}
	}
	old.oldBuild.Store(false) // upgraded
	waitFor(t, 20*time.Second, "every replica to prune once every member applies prunes", func() bool {
		for _, n := range results() {
			if n != 0 {
				return false
			}
		}
		return true
	})
}

func TestRequestRetentionConfig(t *testing.T) {
	base := Config{NodeID: "n1", DataDir: t.TempDir()}
	if got := base.withDefaults().RequestRetention; got != 24*time.Hour {
		t.Fatalf("default retention %v, want 24h", got)
	}
	for _, d := range []time.Duration{-time.Second, time.Millisecond, 99 * time.Millisecond} {
		c := base
		c.RequestRetention = d
		if err := c.withDefaults().Validate(); err == nil {
			t.Errorf("retention %v accepted", d)
		}
	}
	c := base
	c.RequestRetention = 100 * time.Millisecond
	if err := c.withDefaults().Validate(); err != nil {
		t.Errorf("retention 100ms (tests): %v", err)
	}
	for _, tc := range []struct{ retention, every time.Duration }{
		{100 * time.Millisecond, time.Second}, {time.Minute, 15 * time.Second}, {time.Hour, 10 * time.Minute},
		{24 * time.Hour, 10 * time.Minute},
	} {
		if got := pruneEvery(tc.retention); got != tc.every {
			t.Errorf("pruneEvery(%v) = %v, want %v", tc.retention, got, tc.every)
		}
	}
}
