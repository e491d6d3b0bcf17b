package gcpace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// With GOGC=100 the collector lets the heap grow to twice what was live after the last collection before it
// runs again. At a million memories about half of what is live is vectors (half-precision rows and their int8
// copy) and Pebble's block cache and memtables, which stay put between collections and hold no pointers: the
// headroom they earn is a gigabyte of garbage the node keeps resident for nothing. The pacer sets GOGC so that
// the headroom is Percent of the live heap without what is at rest: heap goal = live + (live − held) ×
// Percent/100. Collections then come as often as they would if those buffers lived outside the heap; their
// marking cost does not change, because pointer-free buffers are not scanned.
//
// The other way round, a tiny heap that allocates fast would be collected back to back at GOGC=100; the pacer
// gives it at least Options.MinHeadroom of headroom.
//
// A node that stops writing keeps the garbage of its last burst, and the headroom it was paced for, resident: it
// runs no collection for two minutes, and the runtime returns free memory slowly. Once the heap has been idle
// for Options.IdleRelease the pacer collects and gives the free heap back (debug.FreeOSMemory), once per idle
// spell.

// Options.MinHeadroom's default and bound, and the highest GOGC the pacer sets for it (a heap a thousand times
// smaller than its minimum headroom is collected a little earlier than that).
const (
	DefaultMinHeadroom = 32 << 20
	MaxMinHeadroom     = 1 << 40
	maxPercent         = 100_000
)

// ErrNoHeld is New's answer to Options without Held.
var ErrNoHeld = errors.New("gcpace: Options.Held is required")

// Options configures a Pacer. Held is required; the other fields state their defaults.
type Options struct {
	// Held reports the bytes of the heap at rest: live and not about to be freed, mostly pointer-free (the
	// vector rows of the node's shard indexes, Pebble's block cache and memtables, and the bounded full-text
	// caches, whose entries stay from search to search).
	Held func() int64
	// Percent is the collector's headroom over the rest of the heap, as GOGC states it. Default: GOGC from the
	// environment, else 100.
	Percent int
	// Floor is the lowest GOGC the pacer sets, however much of the heap is at rest, so the collector never runs
	// back to back. Default 10.
	Floor int
	// MinHeadroom is the least the heap may grow, in bytes, between a collection and the next, whatever
	// Percent gives: a tiny heap under a stream of writes would otherwise be collected back to back, each
	// collection costing its fixed share. The pacer raises GOGC above Percent (and above GOGC from the
	// environment) as far as it takes, up to 100,000; a large heap's headroom is larger anyway. A memory limit
	// (GOMEMLIMIT, memnode's --memory-limit) still bounds the heap. Default 32 MiB. A floor of 256 MiB, which
	// collects a young node's heap less often, lets it run through memory it has not touched before; on a
	// machine where page faults are dear (a PVM guest) one client then made 0.72× the puts it made with 32 MiB
	// on fresh clusters, at the median of seven pairs, and floors from none to 64 MiB did about equally well
	// (docs/benchmarks.md, "a smaller floor for the collector"). On a machine where faults were cheap 256 MiB
	// against none had made no difference. Negative: none; at most MaxMinHeadroom.
	MinHeadroom int64
	// Interval is how often the pacer looks at the heap (the live figure changes only at each collection).
	// Default 1s.
	Interval time.Duration
	// IdleRelease is how long the heap must stay idle (less than IdleAllocs allocated an Interval) before the
	// pacer collects and gives the free heap back to the OS, once per idle spell. A burst of writes leaves
	// its garbage and the headroom it was paced for resident until the next collection, which an idle node does
	// not run for two minutes, and the runtime returns free memory slowly. Default 10s; negative: never.
	IdleRelease time.Duration
	// IdleAllocs is the allocation an Interval below which the heap counts as idle. Default: 1 % of the live
	// heap, at least 4 MiB.
	IdleAllocs int64
	// Logger; default: discard.
	Logger *slog.Logger
	// Registry, when set, gets the gauge memcluster_gc_percent.
	Registry prometheus.Registerer
}

// Pacer adjusts GOGC from the live heap and Options.Held.
type Pacer struct {
	opts    Options
	current int
	gauge   prometheus.Gauge
	sample  []metrics.Sample // the live heap and the collections so far
	cycles  uint64           // collections when held was last read
	held    int64            // Held() soon after the last collection: the rows that collection found live
	idle    idleRelease
}

// idleRelease is the pacer's state for giving memory back on an idle heap.
type idleRelease struct {
	allocs   uint64    // bytes allocated so far, at the last step
	since    time.Time // the heap idle since; zero while it allocates
	released uint64    // collections counted right after the last release: none since means nothing to give back
	release  func() uint64
}

// freeOSMemory collects, returns the free heap to the OS, and reports the collections counted since start.
func freeOSMemory() uint64 {
	debug.FreeOSMemory()
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// New validates o, fills its defaults and returns a Pacer. With GOGC=off (or 0) in the environment there is
// nothing to pace: New returns (nil, nil), and a nil Pacer's Run returns at once.
func New(o Options) (*Pacer, error) {
	if o.Held == nil {
		return nil, ErrNoHeld
	}
	if o.Percent == 0 {
		p, off := envPercent(os.Getenv("GOGC"))
		if off || p == 0 {
			return nil, nil
		}
		o.Percent = p
	}
	if o.Percent < 0 {
		return nil, fmt.Errorf("gcpace: Percent %d: must be positive", o.Percent)
	}
	if o.Floor <= 0 {
		o.Floor = 10
	}
	o.Floor = min(o.Floor, o.Percent)
	if o.MinHeadroom == 0 {
		o.MinHeadroom = DefaultMinHeadroom
	}
	if o.MinHeadroom > MaxMinHeadroom {
		return nil, fmt.Errorf("gcpace: MinHeadroom %d: at most %d", o.MinHeadroom, int64(MaxMinHeadroom))
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.IdleRelease == 0 {
		o.IdleRelease = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	p := &Pacer{opts: o, current: o.Percent, idle: idleRelease{release: freeOSMemory},
		gauge: prometheus.NewGauge(prometheus.GaugeOpts{Name: "memcluster_gc_percent",
			Help: "GOGC the node runs with: the collector's headroom over the live heap, sized to the heap without its vector rows and Pebble's buffers, and at least the minimum headroom"}),
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/cycles/total:gc-cycles"},
			{Name: "/gc/heap/allocs:bytes"}}}
	p.gauge.Set(float64(o.Percent))
	if o.Registry != nil {
		if err := o.Registry.Register(p.gauge); err != nil {
			return nil, fmt.Errorf("gcpace: %w", err)
		}
	}
	return p, nil
}

// envPercent reads GOGC as the runtime does: "off" or a negative number turn collection off, a number is the
// percent, anything else (empty included) is 100.
func envPercent(v string) (percent int, off bool) {
	if v == "off" {
		return 0, true
	}
	p, err := strconv.ParseInt(v, 10, 32)
	switch {
	case err != nil:
		return 100, false
	case p < 0:
		return 0, true
	}
	return int(p), false
}

// Run paces the collector until ctx ends, then gives GOGC back its base value.
func (p *Pacer) Run(ctx context.Context) {
	if p == nil {
		return
	}
	t := time.NewTicker(p.opts.Interval)
	defer t.Stop()
	defer debug.SetGCPercent(p.opts.Percent)
	for {
		p.step()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// step sets GOGC for the heap as it is now, when it moved enough to matter.
func (p *Pacer) step() {
	metrics.Read(p.sample)
	if p.sample[0].Value.Kind() != metrics.KindUint64 || p.sample[1].Value.Kind() != metrics.KindUint64 {
		return
	}
	// The live figure is the last collection's: held is read once per collection, so that rows added since
	// (a shard's vectors loading at start) do not count against a live heap that does not hold them yet.
	if c := p.sample[1].Value.Uint64(); c != p.cycles {
		p.cycles, p.held = c, p.opts.Held()
	}
	if a := p.sample[2]; a.Value.Kind() == metrics.KindUint64 {
		p.releaseIfIdle(p.sample[0].Value.Uint64(), p.sample[1].Value.Uint64(), a.Value.Uint64(), time.Now())
	}
	live := p.sample[0].Value.Uint64()
	next := max(Percent(p.opts.Percent, p.opts.Floor, live, p.held), headroomPercent(p.opts.MinHeadroom, live))
	// Small moves are left alone (each call recomputes the pacer's goal under the heap lock), but not a return to base.
	if next == p.current || (abs(next-p.current) < 3 && next != p.opts.Percent) {
		return
	}
	debug.SetGCPercent(next)
	p.opts.Logger.Debug("gc percent", "from", p.current, "to", next)
	p.current = next
	p.gauge.Set(float64(next))
}

// releaseIfIdle collects and returns the free heap to the OS once the heap has allocated less than IdleAllocs an
// Interval for IdleRelease, if a collection ran since the last release (else there is nothing new to give back).
func (p *Pacer) releaseIfIdle(live, cycles, a uint64, now time.Time) {
	if p.opts.IdleRelease < 0 {
		return
	}
	quiet := int64(max(4<<20, live/100))
	if p.opts.IdleAllocs > 0 {
		quiet = p.opts.IdleAllocs
	}
	busy := p.idle.allocs == 0 || int64(a-p.idle.allocs) >= quiet
	p.idle.allocs = a
	switch {
	case busy:
		p.idle.since = time.Time{}
	case p.idle.since.IsZero():
		p.idle.since = now
	case now.Sub(p.idle.since) >= p.opts.IdleRelease && cycles != p.idle.released:
		start := time.Now()
		p.idle.released = p.idle.release()
		p.opts.Logger.Debug("heap idle: memory given back", "live_mib", live>>20, "took", time.Since(start))
	}
}

// Percent is the GOGC that gives a heap of live bytes, held of them at rest, a headroom of base percent of the
// rest: base × (live − held) / live, no lower than floor. Before the first collection (live 0) it is base.
func Percent(base, floor int, live uint64, held int64) int {
	if live == 0 || held <= 0 {
		return base
	}
	rest := int64(live) - held
	if rest <= 0 {
		return floor
	}
	p := int(int64(base) * rest / int64(live))
	return max(floor, min(base, p))
}

// headroomPercent is the GOGC that lets a heap of live bytes grow by at least minHeadroom bytes before the next
// collection (0 when there is no such floor, or no collection yet).
func headroomPercent(minHeadroom int64, live uint64) int {
	if minHeadroom <= 0 || live == 0 {
		return 0
	}
	return int(min((uint64(minHeadroom)*100+live-1)/live, maxPercent)) // MaxMinHeadroom × 100 fits a uint64
}

func abs(x int) int { return max(x, -x) }
