package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/client"
)

// Defaults of bench context: the scale the tiering issue asks to be measured at.
const (
	benchContextHot      = 100_000
	benchContextArchived = 1_000_000
	benchContextCompact  = 100_000
	benchContextClients  = 4
	// benchColdChunk memories are put, then tiered, at a time: one tier transaction's worth (16 segments of
	// 500), all in one month, so tiering reads only the chunk and never the whole archive.
	benchColdChunk = 8000
)

// benchColdTopics never occur in the hot texts (bench_text.go): a question about one of them has no hot
// answer, so the confidence gate escalates it to the archive.
var benchColdTopics = []string{
	"the kayak trip", "the ski chalet", "the bakery job", "the thesis defense", "the scuba course",
	"the camper van", "the flat in Prague", "the violin recital", "the glacier hike", "the safari",
	"the ferry crossing", "the vineyard tour", "the lighthouse visit", "the monastery retreat", "the regatta",
	"the carnival", "the pottery class", "the falconry lesson", "the orchard harvest", "the canoe race",
	"the chess olympiad", "the opera premiere", "the desert rally", "the fjord cruise", "the beekeeping course",
	"the lantern festival", "the harbour walk", "the tango lessons", "the astronomy camp", "the rowing club",
}

type benchContextOptions struct {
	benchOptions
	hot, archived, compact int
	size, loadClients      int
	budget                 int
	user                   string
	skipLoad               bool
}

// benchContextReport is the output of bench context.
type benchContextReport struct {
	Op             string              `json:"op"` // context
	Addrs          []string            `json:"addrs"`
	User           string              `json:"user"`
	Clients        int                 `json:"clients"`
	Budget         int                 `json:"budget"`
	Hot            int64               `json:"hot_loaded"`
	Archived       int64               `json:"archived_loaded"`
	ArchiveEntries int                 `json:"archive_entries"`
	LoadS          float64             `json:"load_s"`
	Phases         []benchContextPhase `json:"phases"`
	Compactor      *benchCompactor     `json:"compactor,omitempty"`
	// CompactionP99Ratio is hot-only p99 while the compactor runs over hot-only p99 just before it.
	CompactionP99Ratio float64 `json:"compaction_p99_ratio,omitempty"`
}

// benchContextPhase is one measured run: answers split by whether they escalated to the archive.
type benchContextPhase struct {
	Name        string       `json:"name"`
	DurationS   float64      `json:"duration_s"`
	Errors      int64        `json:"errors"`
	HotOnly     benchOutcome `json:"hot_only"`
	Escalated   benchOutcome `json:"escalated"`
	ColdEvident int64        `json:"escalated_with_cold_items"` // escalated answers that carried rehydrated items
}

type benchOutcome struct {
	Ops       int64        `json:"ops"`
	OpsPerS   float64      `json:"ops_per_s"`
	LatencyMs benchLatency `json:"latency_ms"`
}

type benchCompactor struct {
	Moved     int     `json:"moved"`
	Segments  int     `json:"segments"`
	ElapsedS  float64 `json:"elapsed_s"`
	ItemsPerS float64 `json:"items_per_s"`
}

func newBenchContextCmd(g *globals) *cobra.Command {
	o := &benchContextOptions{}
	cmd := &cobra.Command{
		Use:   "context [flags]",
		Short: "Load a hot tier and an archive for one user, then time context answers with and without escalation",
		Long: `Load a hot tier and an archive for one user, then time context answers.

Load: --archived memories dated years back are put and tiered cold 8,000 at a time
(tier run --older-than 180d), then --hot recent memories are put. Measure: clients
ask context questions for --duration, half about hot topics, half about topics only
the archive holds; latencies are reported apart for answers that stayed hot and
answers that escalated to the archive. Compactor: --compact memories aged 200 days
are put, hot-only questions are timed for --duration, then again while tier run
--older-than 180d moves them cold; the report gives the compactor's items/s and the p99 ratio.

Run the node with --warm-restore-after 0, or escalated reads start restoring the
archive to the hot tier while the benchmark runs.`,
		Example: `  memctl bench context --hot 100000 --archived 1000000 --compact 50000 --duration 20s -o json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			addrs, err := o.validate(g)
			if err != nil {
				return err
			}
			pool, err := newBenchPool(addrs, max(o.clients, o.loadClients)+1, g.timeout, g.token, o.route)
			if err != nil {
				return err
			}
			defer pool.close()
			r, err := o.run(cmd.Context(), pool, addrs, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), r)
			}
			return printContextReport(cmd.OutOrStdout(), r)
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

func (o *benchContextOptions) addFlags(f *pflag.FlagSet) {
	o.benchOptions.addFlags(f, benchContextClients)
	f.IntVar(&o.hot, "hot", benchContextHot, "recent memories in the hot tier")
	f.IntVar(&o.archived, "archived", benchContextArchived, "old memories tiered cold before measuring")
	f.IntVar(&o.compact, "compact", benchContextCompact, "memories aged 200 days tiered while hot questions are timed (0: skip)")
	f.IntVar(&o.size, "size", 160, "text size of each memory in bytes")
	f.IntVar(&o.loadClients, "load-clients", 16, "concurrent batch puts while loading")
	f.IntVar(&o.budget, "budget", 0, "context token budget (server default when 0)")
	f.StringVar(&o.user, "user", "", "the user to load and ask (default bench-context-<run id>)")
	f.BoolVar(&o.skipLoad, "skip-load", false, "ask --user, loaded by an earlier run, without loading (and without the compactor phase)")
}

func (o *benchContextOptions) validate(g *globals) ([]string, error) {
	addrs, err := o.benchOptions.validate(g)
	switch {
	case err != nil:
		return nil, err
	case o.rate != 0:
		// Its phases time their own requests from when they are sent, not from when they were due.
		return nil, errors.New("--rate is not supported by bench context (it runs closed loop)")
	case o.hot < 1:
		return nil, fmt.Errorf("--hot %d: must be at least 1", o.hot)
	case o.archived < 0 || o.compact < 0:
		return nil, errors.New("--archived and --compact must not be negative")
	case o.size < 40 || o.size > 4000:
		return nil, fmt.Errorf("--size %d: must be between 40 and 4000", o.size)
	case o.loadClients < 1 || o.loadClients > benchMaxClients:
		return nil, fmt.Errorf("--load-clients %d: must be between 1 and %d", o.loadClients, benchMaxClients)
	case o.budget != 0 && (o.budget < 20 || o.budget > 100000):
		return nil, fmt.Errorf("--budget %d: must be between 20 and 100000", o.budget)
	case o.skipLoad && o.user == "":
		return nil, errors.New("--skip-load needs --user: the user an earlier run loaded")
	}
	return addrs, nil
}

func (o *benchContextOptions) run(ctx context.Context, pool *benchPool, addrs []string, progress io.Writer) (benchContextReport, error) {
	if o.user == "" {
		o.user = "bench-context-" + benchRunID()
	}
	r := benchContextReport{Op: "context", Addrs: addrs, User: o.user, Clients: o.clients, Budget: o.budget}
	c, _ := pool.forWorker(0)
	if o.skipLoad {
		r.ArchiveEntries = archiveEntries(ctx, c, o.user)
		r.Phases = append(r.Phases, o.measure(ctx, pool, "mixed", 0.5, progress))
		return r, nil
	}
	start := time.Now()
	now := time.Now().UTC()
	for done := 0; done < o.archived; done += benchColdChunk {
		n := min(benchColdChunk, o.archived-done)
		month := now.AddDate(0, -14-done/(4*benchColdChunk), 0) // four chunks a month, from 14 months back
		stored, err := o.putMany(ctx, pool, n, func(rng *rand.Rand, i int) apiv1.PutRequest {
			at := month.Add(-time.Duration(i%(24*27)) * time.Hour)
			return apiv1.PutRequest{UserID: o.user, Text: benchColdText(rng, o.size), OccurredAt: &at, Tags: []string{"bench"}}
		})
		r.Archived += stored
		if err != nil {
			return r, err
		}
		if _, err := tierUntilDone(ctx, c, o.user, "180d"); err != nil {
			return r, err
		}
		fmt.Fprintf(progress, "bench context: archived %d/%d in %s\n", done+n, o.archived, time.Since(start).Round(time.Second))
	}
	stored, err := o.putMany(ctx, pool, o.hot, func(rng *rand.Rand, _ int) apiv1.PutRequest {
		return apiv1.PutRequest{UserID: o.user, Text: benchText(rng, o.size), Tags: []string{"bench"}}
	})
	r.Hot = stored
	if err != nil {
		return r, err
	}
	r.LoadS = roundTo(time.Since(start).Seconds(), 1)
	r.ArchiveEntries = archiveEntries(ctx, c, o.user)
	fmt.Fprintf(progress, "bench context: loaded %d hot and %d archived (%d archive entries) in %.0fs\n",
		r.Hot, r.Archived, r.ArchiveEntries, r.LoadS)
	r.Phases = append(r.Phases, o.measure(ctx, pool, "mixed", 0.5, progress))
	if o.compact == 0 {
		return r, nil
	}
	return o.compaction(ctx, pool, r, progress)
}

// compaction puts memories old enough to tier, times hot questions, then times them again while tier run
// moves those memories cold.
func (o *benchContextOptions) compaction(ctx context.Context, pool *benchPool, r benchContextReport, progress io.Writer) (benchContextReport, error) {
	aged := time.Now().UTC().AddDate(0, 0, -200)
	if _, err := o.putMany(ctx, pool, o.compact, func(rng *rand.Rand, i int) apiv1.PutRequest {
		at := aged.Add(-time.Duration(i%(24*60)) * time.Hour)
		return apiv1.PutRequest{UserID: o.user, Text: benchText(rng, o.size), OccurredAt: &at, Tags: []string{"bench"}}
	}); err != nil {
		return r, err
	}
	before := o.measure(ctx, pool, "hot_before_compaction", 0, progress)
	c, _ := pool.forWorker(o.clients) // a connection of its own
	var comp benchCompactor
	var tierErr error
	done := make(chan struct{})
	t0 := time.Now()
	go func() {
		defer close(done)
		// --older-than: the default policy ages memories by when they were stored, and these were stored now.
		comp, tierErr = tierUntilDone(ctx, c, o.user, "180d")
		comp.ElapsedS = roundTo(time.Since(t0).Seconds(), 2)
		comp.ItemsPerS = perSecond(int64(comp.Moved), time.Since(t0))
	}()
	during := o.measureUntil(ctx, pool, "hot_during_compaction", 0, done, progress)
	<-done
	if tierErr != nil {
		return r, tierErr
	}
	r.Phases = append(r.Phases, before, during)
	r.Compactor = &comp
	if p := before.HotOnly.LatencyMs.P99; p > 0 {
		r.CompactionP99Ratio = roundTo(during.HotOnly.LatencyMs.P99/p, 2)
	}
	return r, nil
}

// tierUntilDone runs tier run until nothing is left to move: a call stops short of the request deadline with
// its work committed and says partial, and the next call goes on.
func tierUntilDone(ctx context.Context, c *client.Client, user, olderThan string) (benchCompactor, error) {
	var out benchCompactor
	fails := 0
	for {
		res, err := c.TierRun(ctx, user, olderThan)
		if err != nil {
			if fails++; fails > 5 || ctx.Err() != nil {
				return out, fmt.Errorf("tier run: %w", err)
			}
			continue
		}
		out.Moved += res.Moved
		out.Segments += len(res.Segments)
		if res.Moved == 0 && !res.Partial {
			return out, nil
		}
	}
}

// putMany stores n memories made by mk with loadClients concurrent batch puts.
func (o *benchContextOptions) putMany(ctx context.Context, pool *benchPool, n int, mk func(*rand.Rand, int) apiv1.PutRequest) (int64, error) {
	l := &benchLoader{pool: pool}
	var next, stored atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for w := range o.loadClients {
		c, _ := pool.forWorker(w)
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(w)))
		wg.Go(func() {
			for ctx.Err() == nil {
				hi := int(next.Add(benchLoadBatch))
				lo := hi - benchLoadBatch
				if lo >= n {
					return
				}
				reqs := make([]apiv1.PutRequest, 0, benchLoadBatch)
				for i := lo; i < min(hi, n); i++ {
					reqs = append(reqs, mk(rng, i))
				}
				if err := l.putBatch(ctx, c, reqs, 100*time.Millisecond); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				stored.Add(int64(len(reqs)))
			}
		})
	}
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return stored.Load(), firstErr
}

// measure asks context questions for --duration; coldShare of them are about archive-only topics.
func (o *benchContextOptions) measure(ctx context.Context, pool *benchPool, name string, coldShare float64, progress io.Writer) benchContextPhase {
	return o.measureUntil(ctx, pool, name, coldShare, nil, progress)
}

// measureUntil is measure that also stops when stop closes (after at least the warm-up).
func (o *benchContextOptions) measureUntil(ctx context.Context, pool *benchPool, name string, coldShare float64,
	stop <-chan struct{}, progress io.Writer) benchContextPhase {
	hot, esc := newBenchRecorder(), newBenchRecorder()
	var cold atomic.Int64
	run := o.runner(pool, nil, progress, "bench context "+name)
	if stop != nil {
		run.duration, run.warmup = time.Hour, 0 // the whole compaction, until it is done
	}
	measureFrom := time.Now().Add(run.warmup)
	run.op = func(ctx context.Context, c *client.Client, _ int, rng *rand.Rand) (int, error) {
		q := benchQuery(rng)
		if rng.Float64() < coldShare {
			q = "What do you remember about " + benchColdTopics[rng.IntN(len(benchColdTopics))] + "?"
		}
		t0 := time.Now()
		res, err := c.Context(ctx, o.user, apiv1.ContextRequest{Query: q, Budget: o.budget})
		lat := time.Since(t0)
		if err != nil || t0.Before(measureFrom) {
			return 0, err
		}
		rec := hot
		if res.Escalated {
			rec = esc
			if hasCold(res) {
				cold.Add(1)
			}
		}
		rec.record(lat, 1, nil)
		return 1, nil
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if stop != nil {
		go func() {
			select {
			case <-stop:
				cancel()
			case <-runCtx.Done():
			}
		}()
	}
	res := run.run(runCtx)
	d := res.elapsed
	outcome := func(r *benchRecorder) benchOutcome {
		return benchOutcome{Ops: r.ops, OpsPerS: perSecond(r.ops, d), LatencyMs: latencyOf(r.hist)}
	}
	return benchContextPhase{Name: name, DurationS: roundTo(d.Seconds(), 2), Errors: res.total.errors(),
		HotOnly: outcome(hot), Escalated: outcome(esc), ColdEvident: cold.Load()}
}

// archiveEntries counts user's archive entries (0 if the status cannot be read: the figure is informative).
func archiveEntries(ctx context.Context, c *client.Client, user string) int {
	n := 0
	if st, err := c.TierStatus(ctx, user); err == nil {
		for _, t := range st.Types {
			n += t.Archive
		}
	}
	return n
}

func hasCold(res apiv1.ContextResponse) bool {
	for _, b := range res.Blocks {
		for _, it := range b.Items {
			if it.Tier == "cold" {
				return true
			}
		}
	}
	return false
}

// benchColdText is a memory about an archive-only topic, padded with everyday text to about size bytes.
func benchColdText(rng *rand.Rand, size int) string {
	head := benchPick(rng, benchNames) + " " + benchPick(rng, benchFeel) + " " +
		benchColdTopics[rng.IntN(len(benchColdTopics))] + " in " + benchPick(rng, benchPlaces) + "."
	if len(head) >= size {
		return head
	}
	return head + " " + benchText(rng, size-len(head)-1)
}

func printContextReport(w io.Writer, r benchContextReport) error {
	tw := newTable(w)
	fmt.Fprintf(tw, "user\t%s\nhot loaded\t%d\narchived\t%d (%d archive entries)\nload\t%.0fs\n\n",
		r.User, r.Hot, r.Archived, r.ArchiveEntries, r.LoadS)
	fmt.Fprintf(tw, "PHASE\tANSWERS\tOPS\tOPS/S\tP50 MS\tP99 MS\tMAX MS\n")
	for _, p := range r.Phases {
		for _, oc := range []struct {
			kind string
			o    benchOutcome
		}{{"hot-only", p.HotOnly}, {"escalated", p.Escalated}} {
			if oc.o.Ops == 0 {
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.2f\t%.2f\t%.2f\n", p.Name, oc.kind, oc.o.Ops, oc.o.OpsPerS,
				oc.o.LatencyMs.P50, oc.o.LatencyMs.P99, oc.o.LatencyMs.Max)
		}
	}
	if c := r.Compactor; c != nil {
		fmt.Fprintf(tw, "\ncompactor\t%d moved into %d segments in %.1fs (%.0f items/s); hot p99 during/before %.2f×\n",
			c.Moved, c.Segments, c.ElapsedS, c.ItemsPerS, r.CompactionP99Ratio)
	}
	return tw.Flush()
}
