package e2e

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
)

// TestThreeProcessClusterSurvivesSIGKILL is the acceptance scenario: three memnode processes on
// loopback take writes at every node at once; one is SIGKILLed while writes go on; writes resume within a few
// seconds; the node restarts on its data dir without --join and catches up on everything acknowledged.
func TestThreeProcessClusterSurvivesSIGKILL(t *testing.T) {
	needProcesses(t)
	procs := []*proc{newProc(t, "n1"), newProc(t, "n2"), newProc(t, "n3")}
	for _, p := range procs {
		p.start("--bootstrap-expect", "3", "--join", procs[0].gossip, "--shards", "8", "--replicas", "3")
	}
	ctx := context.Background()
	waitFor(t, 60*time.Second, "a healthy 3-node cluster, as every node sees it", func() bool {
		for _, p := range procs {
			st, err := p.client(t).ClusterStatus(ctx)
			if err != nil || !st.Healthy || len(st.Nodes) != 3 {
				return false
			}
		}
		return true
	})
	checkLeaderRouting(t, procs)

	var mu sync.Mutex
	acked := map[string]string{} // id -> user
	write := func(p *proc, user, text string) error {
		m, err := p.client(t).Put(ctx, apiv1.PutRequest{UserID: user, Text: text})
		if err == nil {
			mu.Lock()
			acked[m.ID] = user
			mu.Unlock()
		}
		return err
	}
	// A write from every node at once.
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Add(1)
		go func(i int, p *proc) {
			defer wg.Done()
			for j := 0; j < 30; j++ {
				if err := write(p, fmt.Sprintf("u%d", j%10), fmt.Sprintf("write %d via node %d", j, i)); err != nil {
					t.Errorf("write via %s: %v", p.id, err)
				}
			}
		}(i, p)
	}
	wg.Wait()

	victim := procs[1]
	survivors := []*proc{procs[0], procs[2]}
	victim.kill()
	killedAt := time.Now()
	// Keep writing to every user (so every shard, including those the victim led) through the survivors.
	var worst time.Duration
	var failures atomic.Int64
	for round := 0; round < 5; round++ {
		for u := 0; u < 10; u++ {
			start := time.Now()
			p := survivors[(round+u)%2]
			if err := write(p, fmt.Sprintf("u%d", u), fmt.Sprintf("after kill round %d", round)); err != nil {
				failures.Add(1)
				t.Errorf("write after SIGKILL via %s: %v", p.id, err)
			}
			worst = max(worst, time.Since(start))
		}
	}
	t.Logf("after SIGKILL: 50 writes in %v, slowest %v, failures %d", time.Since(killedAt), worst, failures.Load())
	if worst > 8*time.Second {
		t.Errorf("a write took %v after the kill; want writes resuming within a few seconds", worst)
	}

	t.Cleanup(func() {
		if t.Failed() {
			victim.dumpLog()
		}
	})
	victim.start() // same data dir and addresses, no --join: it must rejoin from what it remembers
	c := victim.client(t)
	waitFor(t, 60*time.Second, "the restarted node to catch up on every acknowledged write", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for id, user := range acked {
			if _, err := c.Get(ctx, user, id, true); err != nil {
				return false
			}
		}
		return true
	})
	waitFor(t, 60*time.Second, "a healthy cluster after the restart", func() bool {
		st, err := c.ClusterStatus(ctx)
		return err == nil && st.Healthy
	})
	// Strong reads of everything from every node.
	for _, p := range procs {
		for id, user := range acked {
			if _, err := p.client(t).Get(ctx, user, id, false); err != nil {
				p.dumpLog()
				t.Fatalf("get %s via %s: %v", id, p.id, err)
			}
		}
	}
	t.Logf("%d acknowledged writes all present on every node", len(acked))
}
