package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/cluster"
)

// nodeList runs `memctl node list -o json` through addr.
func nodeList(t *testing.T, addr string) []apiv1.NodeStatus {
	t.Helper()
	out, errOut, code := memctl(t, addr, "-o", "json", "node", "list")
	var res apiv1.NodesResponse
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Logf("memctl node list: exit %d %s %s", code, out, errOut)
		return nil
	}
	return res.Nodes
}

// TestElasticCluster runs the elastic operations on real processes through memctl: 3 nodes with 16 shards × 3
// and 100 users' memories; 3 more join and within 120 s each of the 6 holds 8 ± 1 replicas and at least 2
// leaders, every memory readable through every node; a drain while clients write (no write fails) reaches 0
// replicas and 0 leaders; the drained node is removed and the cluster is healthy; leadership moves on demand;
// rebalancing pauses and resumes.
func TestElasticCluster(t *testing.T) {
	needProcesses(t)
	var procs []*proc
	for i := 1; i <= 6; i++ {
		procs = append(procs, newProc(t, fmt.Sprintf("n%d", i)))
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range procs {
				p.dumpLog()
			}
		}
	})
	for _, p := range procs[:3] {
		p.start("--bootstrap-expect", "3", "--join", procs[0].gossip, "--shards", "16", "--replicas", "3")
	}
	waitFor(t, 60*time.Second, "a healthy cluster", func() bool {
		code, body := do(t, procs[0].http, "", apiCall{"GET", "/v1/cluster/status", ""})
		return code == 200 && strings.Contains(body, `"healthy":true`)
	})
	ids := map[string]string{}
	for u := range 100 {
		user := fmt.Sprintf("user-%03d", u)
		code, body := do(t, procs[u%3].http, "", apiCall{"POST", "/v1/memories", fmt.Sprintf(`{"user_id":%q,"text":"memory of %s"}`, user, user)})
		var m struct{ ID string }
		if code != 201 || json.Unmarshal([]byte(body), &m) != nil {
			t.Fatalf("put %s: %d %s", user, code, body)
		}
		ids[user] = m.ID
	}
	start := time.Now()
	for _, p := range procs[3:] {
		p.start("--join", procs[0].gossip)
	}
	var last string
	waitFor(t, 120*time.Second, "6 nodes with 8 ± 1 replicas and ≥ 2 leaders each", func() bool {
		nodes := nodeList(t, procs[0].http)
		b, _ := json.Marshal(nodes)
		last = string(b)
		if len(nodes) != 6 {
			return false
		}
		for _, n := range nodes {
			if n.State != "alive" || n.Replicas < 7 || n.Replicas > 9 || n.Leaders < 2 {
				return false
			}
		}
		_, body := do(t, procs[0].http, "", apiCall{"GET", "/v1/cluster/status", ""})
		return strings.Contains(body, `"healthy":true`) && strings.Contains(body, `"moves":[]`)
	})
	t.Logf("balanced %.1fs after 3 joins: %s", time.Since(start).Seconds(), last)
	for user, id := range ids {
		for _, p := range procs {
			if code, body := do(t, p.http, "", apiCall{"GET", "/v1/memories/" + id + "?user_id=" + user, ""}); code != 200 {
				t.Fatalf("read %s through %s after the rebalance: %d %s", user, p.id, code, body)
			}
		}
	}

	// Drain n6 while clients write through every node.
	var writes, failed atomic.Int64
	var lastErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf(`{"user_id":"w%d-%d","text":"written during the drain"}`, w, i%50)
				if code, out := do(t, procs[(w+i)%5].http, "", apiCall{"POST", "/v1/memories", body}); code != 201 {
					failed.Add(1)
					lastErr.Store(fmt.Sprintf("%d %s", code, out))
				}
				writes.Add(1)
			}
		}()
	}
	start = time.Now()
	out, errOut, code := memctl(t, procs[1].http, "node", "drain", "n6", "--wait-timeout", "120s")
	close(stop)
	wg.Wait()
	if code != 0 {
		t.Fatalf("memctl node drain n6: exit %d %s %s", code, out, errOut)
	}
	t.Logf("drained in %.1fs with %d writes meanwhile; progress:\n%s", time.Since(start).Seconds(), writes.Load(), errOut)
	if failed.Load() > 0 {
		t.Fatalf("%d of %d writes failed during the drain; last: %v", failed.Load(), writes.Load(), lastErr.Load())
	}
	if out, errOut, code := memctl(t, procs[0].http, "-o", "json", "node", "remove", "n6"); code != 0 || !strings.Contains(out, `"removed"`) {
		t.Fatalf("memctl node remove n6: exit %d %s %s", code, out, errOut)
	}
	waitFor(t, 60*time.Second, "a healthy cluster without n6", func() bool {
		code, body := do(t, procs[0].http, "", apiCall{"GET", "/v1/cluster/status", ""})
		return code == 200 && strings.Contains(body, `"healthy":true`)
	})
	// Refusals name the problem on one line and exit non-zero.
	if _, errOut, code := memctl(t, procs[0].http, "node", "remove", "n2"); code == 0 || !strings.Contains(errOut, "would lose") {
		t.Errorf("removing a node that holds replicas: exit %d %q", code, errOut)
	}
	if _, errOut, code := memctl(t, procs[0].http, "node", "drain", "nope"); code == 0 || !strings.Contains(errOut, "404") {
		t.Errorf("draining an unknown node: exit %d %q", code, errOut)
	}
	// Leadership on demand, with rebalancing paused so it stays.
	if out, errOut, code := memctl(t, procs[0].http, "-o", "json", "cluster", "rebalance", "--pause"); code != 0 || !strings.Contains(out, `"paused": true`) {
		t.Fatalf("rebalance --pause: exit %d %s %s", code, out, errOut)
	}
	var shards apiv1.ShardsResponse
	out, _, _ = memctl(t, procs[0].http, "-o", "json", "shard", "list")
	if err := json.Unmarshal([]byte(out), &shards); err != nil || len(shards.Shards) != 16 {
		t.Fatalf("memctl shard list: %v %s", err, out)
	}
	s := shards.Shards[3]
	to := s.Replicas[0]
	if to == s.Leader {
		to = s.Replicas[1]
	}
	if out, errOut, code := memctl(t, procs[0].http, "shard", "transfer-leader", "3", "--to", to); code != 0 {
		t.Fatalf("transfer-leader: exit %d %s %s", code, out, errOut)
	}
	out, _, _ = memctl(t, procs[2].http, "-o", "json", "shard", "list")
	if err := json.Unmarshal([]byte(out), &shards); err != nil || shards.Shards[3].Leader != to {
		t.Errorf("shard 3 led by %q after the transfer to %s", shards.Shards[3].Leader, to)
	}
	if _, errOut, code := memctl(t, procs[0].http, "cluster", "rebalance", "--resume"); code != 0 {
		t.Fatalf("rebalance --resume: %s", errOut)
	}
	splitUnderWrites(t, procs[:5], ids, 100+writes.Load())
}

// splitUnderWrites splits shard 5 with memctl while three clients write to its users (and others) through
// every node: the shard count grows by one, no write fails, every memory of the shard's users is readable
// through every node, and the shards together hold each memory once (their counts add up to what was written).
func splitUnderWrites(t *testing.T, procs []*proc, ids map[string]string, before int64) {
	t.Helper()
	var users []string
	for u := range ids {
		if cluster.ShardFor(u, 16) == 5 {
			users = append(users, u)
		}
	}
	if len(users) == 0 {
		t.Fatal("no user on shard 5")
	}
	var mu sync.Mutex
	written := map[string][]string{}
	for _, u := range users {
		written[u] = []string{ids[u]}
	}
	var failed atomic.Int64
	var lastErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				u := users[(w+i)%len(users)]
				code, out := do(t, procs[(w+i)%len(procs)].http, "", apiCall{"POST", "/v1/memories",
					fmt.Sprintf(`{"user_id":%q,"text":"written during the split %d-%d"}`, u, w, i)})
				var m struct{ ID string }
				if code != 201 || json.Unmarshal([]byte(out), &m) != nil {
					failed.Add(1)
					lastErr.Store(fmt.Sprintf("%d %s", code, out))
					continue
				}
				mu.Lock()
				written[u] = append(written[u], m.ID)
				mu.Unlock()
			}
		})
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, l := range written {
			n += len(l)
		}
		return n
	}
	n0 := count()
	waitFor(t, 30*time.Second, "writes before the split", func() bool { return count() >= n0+20 })
	start := time.Now()
	out, errOut, code := memctl(t, procs[2].http, "-o", "json", "shard", "split", "5")
	took := time.Since(start)
	n1 := count()
	waitFor(t, 30*time.Second, "writes after the split", func() bool { return count() >= n1+20 || failed.Load() > 0 })
	close(stop)
	wg.Wait()
	var res apiv1.SplitResponse
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Child != 16 || !res.Done || res.Shards != 17 {
		t.Fatalf("memctl shard split 5: exit %d %s %s", code, out, errOut)
	}
	if failed.Load() > 0 {
		t.Fatalf("%d writes failed during the split; last: %v", failed.Load(), lastErr.Load())
	}
	total := before
	for u, list := range written {
		total += int64(len(list)) - 1 // the first is ids[u], counted in before
		for _, id := range list {
			for _, p := range procs {
				if code, body := do(t, p.http, "", apiCall{"GET", "/v1/memories/" + id + "?user_id=" + u, ""}); code != 200 {
					t.Fatalf("read %s of %s through %s after the split: %d %s", id, u, p.id, code, body)
				}
			}
		}
	}
	var last string
	waitFor(t, 30*time.Second, "17 shards holding every memory once", func() bool {
		var shards apiv1.ShardsResponse
		out, _, _ := memctl(t, procs[0].http, "-o", "json", "shard", "list")
		if json.Unmarshal([]byte(out), &shards) != nil || len(shards.Shards) != 17 {
			return false
		}
		var sum int64
		for _, s := range shards.Shards {
			sum += s.Memories
		}
		last = fmt.Sprintf("%d memories in the shards, %d written", sum, total)
		return sum == total
	})
	t.Logf("split shard 5 → 16 in %v under writes (%d users of shard 5, %d writes to them, none failed); %s",
		took.Round(time.Millisecond), len(users), count()-len(users), last)
}
