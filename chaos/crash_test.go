package chaos

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

var flagCycles = flag.Int("chaos.crash-cycles", 10, "TestCrashCycles: cycles of SIGKILL every node, restart all")

// TestCrashCycles: under heavy concurrent writes, SIGKILL every node at seeded random moments, restart them all,
// wait for the cluster to be healthy, and repeat; then every acknowledged write must be present, the history
// linearizable and the replicas identical. The last line is
// `chaos-crash: cycles=N ops=M acked=A violations=V lost=L` (violations include replica divergences).
func TestCrashCycles(t *testing.T) {
	ok, why := enabled()
	if !ok {
		t.Skip(why)
	}
	seed := firstSeed()
	clients := 2 * *flagClients
	var v verdict
	acked, cycles := 0, 0
	defer func() {
		if t.Skipped() {
			return
		}
		if t.Failed() {
			fmt.Printf("FAILED seed=%d; replay: MEMCLUSTER_CHAOS=1 go test ./chaos/ -run '^TestCrashCycles$' -count=1 -v -chaos.seed=%d -chaos.crash-cycles=%d -chaos.clients=%d -chaos.net=%s\n",
				seed, seed, *flagCycles, *flagClients, *flagNet)
		}
		fmt.Printf("chaos-crash: cycles=%d ops=%d acked=%d violations=%d lost=%d\n", cycles, v.ops, acked, v.violations+v.divergent, v.lost)
	}()

	c := newCluster(t, 3, 0, nil)
	users := make([]string, 16)
	for i := range users {
		users[i] = fmt.Sprintf("crash-%d-u%d", seed, i)
	}
	h := newHistory()
	w := &workload{h: h, c: c, users: users, clients: clients, seed: seed, mix: mix{put: 70, get: 20}}
	ctx, cancel := context.WithCancel(context.Background())
	wg := w.run(ctx)
	stop := func() { cancel(); wg.Wait() }
	r := rand.New(rand.NewPCG(seed, 0x6372617368))
	ms := func(lo, span int) time.Duration { return time.Duration(lo+r.IntN(span)) * time.Millisecond }
	for ; cycles < *flagCycles; cycles++ {
		time.Sleep(ms(300, 1700)) // writes flow
		nodes := c.nodes()
		for _, i := range r.Perm(len(nodes)) {
			time.Sleep(ms(0, 400))
			nodes[i].kill()
		}
		time.Sleep(ms(100, 700)) // all down
		for _, i := range r.Perm(len(nodes)) {
			time.Sleep(ms(0, 200))
			if err := nodes[i].start(); err != nil {
				stop()
				t.Fatalf("cycle %d: restart %s: %v", cycles, nodes[i].id, err)
			}
		}
		t0 := time.Now()
		if err := c.waitHealthy(60 * time.Second); err != nil {
			stop()
			c.dumpLogs()
			t.Fatalf("cycle %d: %v", cycles, err)
		}
		t.Logf("cycle %d: all 3 nodes SIGKILLed and restarted; healthy again after %.1fs", cycles, time.Since(t0).Seconds())
	}
	time.Sleep(time.Second)
	stop()
	acked = len(h.acked())
	var err error
	if v, err = check(t, c, h, clients, fmt.Sprintf("crash-%d", seed)); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d acknowledged puts; %d replica copies compared", acked, v.replicasChecked)
	if v.violations > 0 || v.lost > 0 || v.divergent > 0 {
		t.Errorf("%d linearizability violations, %d divergent ids, %d lost acknowledged writes", v.violations, v.divergent, v.lost)
	}
}
