package chaos

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/client"
	"github.com/memcluster/memcluster/memory"
)

var (
	flagSchedules = flag.Int("chaos.schedules", 3, "number of seeded schedules")
	flagDuration  = flag.Duration("chaos.duration", 20*time.Second, "length of each schedule")
	flagSeed      = flag.Uint64("chaos.seed", 0, "seed of the first schedule (schedule i uses seed+i); 0 = from the clock")
	flagClients   = flag.Int("chaos.clients", 4, "concurrent clients")
	flagUsers     = flag.Int("chaos.users", 8, "users per schedule (user_id is the shard key)")
	flagKeep      = flag.Bool("chaos.keep", false, "keep data dirs and logs even when every check passes")
	flagPlant     = flag.Bool("chaos.plant-anomaly", false, "self-test: turn one final read into a 404, which the checks must report")
)

const clientTimeout = 3 * time.Second

// enabled: the campaign runs real processes for minutes, so plain `go test ./...` skips it unless
// MEMCLUSTER_CHAOS=1 is set or a -chaos.* flag is given explicitly (then it always runs, CI or not).
func enabled() (bool, string) {
	// CI runs the short campaign (the flag defaults) as part of the suite; elsewhere it is opt-in.
	if os.Getenv("MEMCLUSTER_CHAOS") == "1" || os.Getenv("CI") == "true" {
		return true, ""
	}
	explicit := false
	flag.Visit(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "chaos.") {
			explicit = true
		}
	})
	if explicit {
		return true, ""
	}
	return false, "chaos campaign skipped: set MEMCLUSTER_CHAOS=1 or run `make chaos-short` / `make chaos`"
}

// event is one recorded operation.
type event struct {
	client    int
	in        input
	out       output
	call, ret time.Duration // since the run's origin; ret = -1 when indeterminate
	failed    bool          // definitely did not happen (connection refused, 4xx other than 404): not in the history
}

// fault is one step of the nemesis.
type fault struct {
	at    time.Duration // offset from the schedule's start
	kind  string        // "kill" or "pause"
	node  int
	hold  time.Duration // down or paused for this long
	after time.Duration // quiet time after healing
}

// plan derives the nemesis schedule from the seed alone, so a seed replays the same faults.
func plan(seed uint64, nodes int, d time.Duration) []fault {
	r := rand.New(rand.NewPCG(seed, 0x6368616f73))
	var fs []fault
	t := time.Duration(500+r.IntN(1500)) * time.Millisecond
	for t < d-2*time.Second {
		f := fault{at: t, node: r.IntN(nodes)}
		if r.IntN(2) == 0 {
			f.kind, f.hold = "kill", time.Duration(300+r.IntN(2700))*time.Millisecond
		} else {
			f.kind, f.hold = "pause", time.Duration(200+r.IntN(1800))*time.Millisecond
		}
		f.after = time.Duration(1000+r.IntN(2500)) * time.Millisecond
		fs = append(fs, f)
		t += f.hold + f.after
	}
	return fs
}

type run struct {
	t      *testing.T
	nodes  []*node
	origin time.Time
}

func (r *run) now() time.Duration { return time.Since(r.origin) }

// classify maps an error to: definite failure (did not apply), not found, or indeterminate.
func classify(err error) (notFound, definiteFail bool) {
	if errors.Is(err, memory.ErrNotFound) {
		return true, false
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return false, true // the request never reached a node
	}
	var ae *client.APIError
	if errors.As(err, &ae) && ae.Status >= 400 && ae.Status < 500 && ae.Status != 408 && ae.Status != 429 {
		return false, true
	}
	return false, false
}

type scheduleResult struct {
	ops, violations, lost int
	windows               []time.Duration // worst user's unavailability after each kill
	anyWindows            []time.Duration // first successful write to any user after each kill
	pauses, kills         int
}

func TestChaos(t *testing.T) {
	ok, why := enabled()
	if !ok {
		t.Skip(why)
	}
	seed := *flagSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano()%1_000_000) + 1
	}
	var total scheduleResult
	var failedSeeds []uint64
	schedules := 0
	defer func() {
		for _, s := range failedSeeds {
			fmt.Printf("FAILED seed=%d; replay: MEMCLUSTER_CHAOS=1 go test ./chaos/ -run '^TestChaos$' -count=1 -v -chaos.seed=%d -chaos.schedules=1 -chaos.duration=%s -chaos.clients=%d -chaos.users=%d\n",
				s, s, *flagDuration, *flagClients, *flagUsers)
		}
		fmt.Printf("chaos: schedules=%d ops=%d violations=%d lost=%d\n", schedules, total.ops, total.violations, total.lost)
	}()

	root, err := os.MkdirTemp("", "memcluster-chaos-")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := buildBinaries(root)
	if err != nil {
		t.Fatal(err)
	}
	nodes := make([]*node, 3)
	for i := range nodes {
		if nodes[i], err = newNode(bin, root, fmt.Sprintf("n%d", i+1)); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range nodes {
		n.extra = []string{"--bootstrap-expect", "3", "--join", nodes[0].gossip, "--shards", "4", "--replicas", "3"}
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.signal(syscall.SIGCONT)
			n.kill()
			if n.logf != nil {
				n.logf.Close()
			}
		}
		if t.Failed() || *flagKeep {
			t.Logf("data dirs and node logs kept in %s", root)
		} else {
			os.RemoveAll(root)
		}
	})
	for _, n := range nodes {
		if err := n.start(); err != nil {
			t.Fatal(err)
		}
	}
	if err := waitHealthy(nodes, 90*time.Second); err != nil {
		for _, n := range nodes {
			t.Logf("--- %s:\n%s", n.id, n.tail(30))
		}
		t.Fatal(err)
	}
	// The restart path has no --join: a node must rejoin from its data dir.
	for _, n := range nodes {
		n.extra = nil
	}

	r := &run{t: t, nodes: nodes, origin: time.Now()}
	for i := 0; i < *flagSchedules; i++ {
		s := seed + uint64(i)
		res, err := r.schedule(s)
		schedules++
		total.ops += res.ops
		total.violations += res.violations
		total.lost += res.lost
		total.kills += res.kills
		total.pauses += res.pauses
		total.windows = append(total.windows, res.windows...)
		total.anyWindows = append(total.anyWindows, res.anyWindows...)
		t.Logf("schedule seed=%d: ops=%d kills=%d pauses=%d violations=%d lost=%d unavailability(worst user) %s",
			s, res.ops, res.kills, res.pauses, res.violations, res.lost, fmtWindows(res.windows))
		if err != nil || res.violations > 0 || res.lost > 0 {
			failedSeeds = append(failedSeeds, s)
			if err != nil {
				t.Errorf("schedule seed=%d: %v", s, err)
			} else {
				t.Errorf("schedule seed=%d: %d linearizability violations, %d lost acknowledged writes", s, res.violations, res.lost)
			}
			if err != nil {
				break // the cluster did not heal: later schedules would only report the same thing
			}
		}
	}
	t.Logf("total: kills=%d pauses=%d; unavailability after SIGKILL, first write on the worst user: %s; on any user: %s",
		total.kills, total.pauses, fmtWindows(total.windows), fmtWindows(total.anyWindows))
}

func fmtWindows(ws []time.Duration) string {
	if len(ws) == 0 {
		return "n=0"
	}
	s := slices.Clone(ws)
	slices.Sort(s)
	return fmt.Sprintf("n=%d min=%v median=%v max=%v", len(s), s[0].Round(time.Millisecond),
		s[len(s)/2].Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond))
}

// schedule runs the clients and the nemesis for one seed, heals, reads back, and checks.
func (r *run) schedule(seed uint64) (scheduleResult, error) {
	t := r.t
	var res scheduleResult
	d := *flagDuration
	users := make([]string, *flagUsers)
	for i := range users {
		users[i] = fmt.Sprintf("chaos-%d-u%d", seed, i)
	}

	var mu sync.Mutex
	var events []*event
	ids := map[string][]string{} // user -> ids of acknowledged puts (the last few)
	record := func(e *event) {
		mu.Lock()
		events = append(events, e)
		if e.in.Kind == opPut && e.ret >= 0 && !e.failed {
			l := append(ids[e.in.User], e.in.ID)
			if len(l) > 6 {
				l = l[len(l)-6:]
			}
			ids[e.in.User] = l
		}
		mu.Unlock()
	}

	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for c := 0; c < *flagClients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(c)+1))
			for n := 0; ctx.Err() == nil; n++ {
				user := users[rng.IntN(len(users))]
				// Any node that is up takes any request (it forwards to the shard leader).
				var up []*node
				for _, nd := range r.nodes {
					if nd.up() {
						up = append(up, nd)
					}
				}
				if len(up) == 0 {
					time.Sleep(50 * time.Millisecond)
					continue
				}
				nd := up[rng.IntN(len(up))]
				mu.Lock()
				known := ids[user]
				id := ""
				if len(known) > 0 {
					id = known[rng.IntN(len(known))]
				}
				mu.Unlock()
				p := rng.IntN(10)
				e := &event{client: c}
				bg := context.Background() // the client's own timeout bounds each call; never cut one short
				switch {
				case p < 4 || id == "":
					text := fmt.Sprintf("s%d c%d op%d", seed, c, n)
					e.in = input{Kind: opPut, User: user, Text: text}
					e.call = r.now()
					m, err := nd.client.Put(bg, apiv1.PutRequest{UserID: user, Text: text})
					e.ret = r.now()
					if err != nil {
						_, def := classify(err)
						// An indeterminate put has an id nobody knows: no later operation can refer to it, so
						// leaving it out of the history loses nothing.
						e.failed, e.out.Unknown = true, !def
					} else {
						e.in.ID = m.ID
					}
				case p < 8:
					e.in = input{Kind: opGet, User: user, ID: id}
					e.call = r.now()
					m, err := nd.client.Get(bg, user, id, false)
					e.ret = r.now()
					if err == nil {
						e.out = output{Found: true, Text: m.Text}
					} else if nf, _ := classify(err); nf {
						e.out = output{Found: false}
					} else {
						e.failed = true // a read that failed has no effect
					}
				default:
					e.in = input{Kind: opDelete, User: user, ID: id}
					e.call = r.now()
					err := nd.client.Delete(bg, user, id)
					e.ret = r.now()
					if err == nil {
						e.out = output{Found: true}
					} else if nf, def := classify(err); nf {
						e.out = output{Found: false}
					} else if def {
						e.failed = true
					} else {
						e.out, e.ret = output{Unknown: true}, -1
					}
				}
				record(e)
				if e.failed || e.ret < 0 {
					time.Sleep(time.Duration(20+rng.IntN(80)) * time.Millisecond) // back off a little
				}
			}
		}(c)
	}

	// The nemesis.
	var kills []time.Duration
	start := time.Now()
	for _, f := range plan(seed, len(r.nodes), d) {
		if w := time.Until(start.Add(f.at)); w > 0 {
			time.Sleep(w)
		}
		n := r.nodes[f.node]
		switch f.kind {
		case "kill":
			n.kill()
			kills = append(kills, r.now())
			res.kills++
			t.Logf("nemesis %6.2fs: SIGKILL %s, restart after %v", time.Since(start).Seconds(), n.id, f.hold)
			time.Sleep(f.hold)
			if err := n.start(); err != nil {
				return res, fmt.Errorf("restart %s: %v", n.id, err)
			}
		case "pause":
			res.pauses++
			t.Logf("nemesis %6.2fs: SIGSTOP %s for %v", time.Since(start).Seconds(), n.id, f.hold)
			n.signal(syscall.SIGSTOP)
			time.Sleep(f.hold)
			n.signal(syscall.SIGCONT)
		}
		time.Sleep(f.after)
	}
	wg.Wait()

	// Heal: every node running and unpaused, the cluster healthy.
	for _, n := range r.nodes {
		n.signal(syscall.SIGCONT)
		if err := n.start(); err != nil {
			return res, err
		}
	}
	if err := waitHealthy(r.nodes, 90*time.Second); err != nil {
		for _, n := range r.nodes {
			t.Logf("--- %s:\n%s", n.id, n.tail(30))
		}
		return res, err
	}

	// Final linearizable reads of every id ever acknowledged, through every node in turn; they join the history.
	mu.Lock()
	var all []struct{ user, id string }
	seen := map[string]bool{}
	for _, e := range events {
		if e.in.Kind == opPut && !e.failed && !seen[e.in.ID] {
			seen[e.in.ID] = true
			all = append(all, struct{ user, id string }{e.in.User, e.in.ID})
		}
	}
	mu.Unlock()
	for i, k := range all {
		var e *event
		for attempt := 0; attempt < 20; attempt++ {
			nd := r.nodes[(i+attempt)%len(r.nodes)]
			e = &event{client: *flagClients, in: input{Kind: opGet, User: k.user, ID: k.id}, call: r.now()}
			m, err := nd.client.Get(context.Background(), k.user, k.id, false)
			e.ret = r.now()
			if err == nil {
				e.out = output{Found: true, Text: m.Text}
				break
			}
			if nf, _ := classify(err); nf {
				break
			}
			e.failed = true
			time.Sleep(250 * time.Millisecond)
		}
		if e.failed {
			return res, fmt.Errorf("final read of %s/%s never succeeded", k.user, k.id)
		}
		if *flagPlant && e.out.Found {
			*flagPlant = false
			e.out = output{}
			t.Logf("planted anomaly: final read of %s reported as 404", k.id)
		}
		events = append(events, e)
	}

	// lost: acknowledged puts with no delete attempt at all that are gone at the end. A delete that answered 404
	// counts as an attempt: it may have applied and misreported (that shows as a violation, not as lost).
	deleteTried := map[string]bool{}
	final := map[string]bool{}
	for _, e := range events {
		if e.in.Kind == opDelete && (!e.failed || e.out.Unknown) {
			deleteTried[e.in.ID] = true
		}
		if e.client == *flagClients {
			final[e.in.ID] = e.out.Found
		}
	}
	for id, found := range final {
		if !found && !deleteTried[id] {
			res.lost++
			t.Logf("LOST: acknowledged put %s is not found after healing", id)
		}
	}

	// Unavailability: from each kill to the first acknowledged put that started after it, per user.
	for _, k := range kills {
		first := map[string]time.Duration{}
		for _, e := range events {
			if e.in.Kind == opPut && !e.failed && e.call >= k && e.client < *flagClients {
				if w, ok := first[e.in.User]; !ok || e.ret-k < w {
					first[e.in.User] = e.ret - k
				}
			}
		}
		var worst, best time.Duration = 0, time.Duration(math.MaxInt64)
		for _, w := range first {
			worst, best = max(worst, w), min(best, w)
		}
		if len(first) > 0 {
			res.windows = append(res.windows, worst)
			res.anyWindows = append(res.anyWindows, best)
		}
		if len(first) < len(users) {
			// Censored: some user saw no acknowledged put between the kill and the end of the clients' run.
			t.Logf("kill at %v: %d of %d users had no acknowledged put before the clients stopped (window not measured for them)",
				k.Round(time.Millisecond), len(users)-len(first), len(users))
		}
	}

	// The check.
	var ops []porcupine.Operation
	for _, e := range events {
		if e.failed {
			continue
		}
		ret := int64(e.ret)
		if e.ret < 0 {
			ret = math.MaxInt64
		}
		ops = append(ops, porcupine.Operation{ClientId: e.client, Input: e.in, Output: e.out, Call: int64(e.call), Return: ret})
	}
	res.ops = len(ops)
	for _, part := range registerModel.Partition(ops) {
		r2, info := porcupine.CheckOperationsVerbose(registerModel, part, 30*time.Second)
		switch r2 {
		case porcupine.Illegal:
			res.violations++
			in := part[0].Input.(input)
			path := filepath.Join(os.TempDir(), fmt.Sprintf("chaos-%d-%s.html", seed, in.ID))
			if err := porcupine.VisualizePath(registerModel, info, path); err == nil {
				t.Logf("VIOLATION on %s/%s; visualization in %s", in.User, in.ID, path)
			}
			for _, op := range part {
				ret := "pending"
				if op.Return != math.MaxInt64 {
					ret = time.Duration(op.Return).String()
				}
				t.Logf("  client %d [%v, %s] %s", op.ClientId, time.Duration(op.Call), ret,
					registerModel.DescribeOperation(op.Input, op.Output))
			}
		case porcupine.Unknown:
			t.Logf("check of %s timed out (counted as no violation)", part[0].Input.(input).ID)
		}
	}
	return res, nil
}
