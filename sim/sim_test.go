package sim

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

var (
	flagSeeds   = flag.Int("sim.seeds", 30, "TestSimSchedules runs seeds -sim.first .. -sim.first+N-1")
	flagFirst   = flag.Uint64("sim.first", 1, "the first seed of -sim.seeds (long campaigns run in chunks)")
	flagSeed    = flag.Uint64("sim.seed", 0, "replay only this seed (0: run -sim.seeds seeds)")
	flagHide    = flag.Bool("sim.monotonic", false, "declare the log store monotonic to raft (the path of hashicorp/raft#697's panic, fixed in the fork)")
	flagRetry   = flag.Bool("sim.retryputs", false, "retry puts after ambiguous failures, as cluster's router does")
	flagVerbose = flag.Bool("sim.v", false, "log raft's errors and every run's schedule and events")
	flagStrict  = flag.Bool("sim.strict", true, "fail on hashicorp/raft#697's signatures too (false tolerates them, for a run against upstream raft without the fork's patch)")
	flagMoves   = flag.Int("sim.moves", 1, "replica moves per run (a spare joins as a non-voter, is promoted, an old voter removed)")
	flagDisk    = flag.Int("sim.diskfaults", 1, "disk faults per run (the leader's raft log refuses writes for 20-150 ms)")
)

func seeds() []uint64 {
	if *flagSeed != 0 {
		return []uint64{*flagSeed}
	}
	var out []uint64
	first := max(*flagFirst, 1)
	for s := first; s < first+uint64(max(*flagSeeds, 0)); s++ {
		out = append(out, s)
	}
	return out
}

func testLogger(t *testing.T) *slog.Logger {
	if !*flagVerbose {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("test", t.Name())
}

// TestSimSchedules runs one seeded fault schedule per seed against a real raft group of real ShardFSMs and checks
// every user's history for linearizability and the healed replicas for byte-identical keyspaces.
func TestSimSchedules(t *testing.T) {
	if os.Getenv(childEnv) == "" && *flagSeed == 0 {
		isolate(t) // this same test, in a child process (isolate_test.go)
		return
	}
	var tally tally
	start := time.Now()
	// Runs sleep most of the time (raft timers, think times, fault steps), so seeds run -parallel at a time.
	t.Run("seeds", func(t *testing.T) {
		for _, seed := range seeds() {
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Parallel()
				res, err := Run(Options{Seed: seed, ForceMonotonic: *flagHide, RetryAmbiguousPuts: *flagRetry, Moves: *flagMoves, DiskFaults: *flagDisk, Logger: testLogger(t)})
				if err != nil && KnownUpstream(err) && !*flagStrict {
					// Open upstream, fixed in the fork (DESIGN.md): with -sim.strict=false reported and counted, not
					// failed. The history recorded up to it was checked and is linearizable.
					t.Logf("seed %d: KNOWN UPSTREAM hashicorp/raft#697, not counted as a failure (-sim.strict=false): %v", seed, err)
					tally.known697.Add(1)
					return
				}
				if err != nil {
					fail(t, res, err)
					return
				}
				if *flagVerbose {
					t.Log(summary(res))
				}
				tally.add(res)
			})
		}
	})
	t.Logf("%d seeds in %v: %s", len(seeds()), time.Since(start).Round(time.Millisecond), &tally)
	if t.Failed() || *flagSeed != 0 || len(seeds()) < 10 {
		return
	}
	// Guard against a harness that silently stopped injecting faults or snapshotting.
	if tally.net.Dropped == 0 || tally.net.Delayed == 0 || tally.net.Snapshots == 0 || tally.replayedSnapshots == 0 {
		t.Errorf("schedules exercised too little: %s", &tally)
	}
}

// tally sums what the seeds exercised, to show the runs were not vacuous.
type tally struct {
	mu                              sync.Mutex
	net                             NetStats
	ops, unknown, replayedSnapshots int
	known697                        atomic.Int64 // seeds that hit hashicorp/raft#697
}

func (t *tally) add(res *Result) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.net.Dropped += res.Net.Dropped
	t.net.Delayed += res.Net.Delayed
	t.net.Snapshots += res.Net.Snapshots
	for _, r := range res.Replays {
		if r.SnapshotIndex > 0 && r.Entries > 0 {
			t.replayedSnapshots++
		}
	}
	t.ops += len(res.History)
	t.unknown += res.Unknown
}

func (t *tally) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return fmt.Sprintf("%d operations (%d unknown), %d messages dropped, %d delayed, %d snapshots installed, %d replays of a snapshot plus log, %d seeds stuck on hashicorp/raft#697",
		t.ops, t.unknown, t.net.Dropped, t.net.Delayed, t.net.Snapshots, t.replayedSnapshots, t.known697.Load())
}

// fail reports a failed seed with everything needed to replay and read it.
func fail(t *testing.T, res *Result, err error) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d failed: %v\n", res.Seed, err)
	fmt.Fprintf(&b, "replay: go test -count=1 -run 'TestSimSchedules' ./sim/ -sim.seed=%d -sim.v -v\n", res.Seed)
	b.WriteString(summary(res))
	if len(res.History) > 0 {
		if f, err := os.CreateTemp("", fmt.Sprintf("sim-seed-%d-*.html", res.Seed)); err == nil {
			if porcupine.Visualize(userModel, res.Lin, f) == nil {
				fmt.Fprintf(&b, "history visualization: %s\n", f.Name())
			}
			f.Close()
		}
	}
	t.Error(b.String())
}

func summary(res *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan: %s\n", strings.Join(res.Plan, "\n      "))
	fmt.Fprintf(&b, "events:\n  %s\n", strings.Join(res.Events, "\n  "))
	fmt.Fprintf(&b, "%d operations (%d unknown), net %+v, digests %v, replays %+v, took %v\n",
		len(res.History), res.Unknown, res.Net, res.Digests, res.Replays, res.Duration.Round(time.Millisecond))
	return b.String()
}
