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

// ErrNoHeld is New's answer to Options without Held.
var ErrNoHeld = errors.New("gcpace: Options.Held is required")

// Options configures a Pacer. Held is required; the other fields state their defaults.
type Options struct {
	// Held reports the bytes of the heap at rest: live, pointer-free, and not about to be freed (the vector
	// rows of the node's shard indexes, Pebble's block cache and memtables).
	Held func() int64
	// Percent is the collector's headroom over the rest of the heap, as GOGC states it. Default: GOGC from the
	// environment, else 100.
	Percent int
	// Floor is the lowest GOGC the pacer sets, however much of the heap is at rest, so the collector never runs
	// back to back. Default 10.
	Floor int
	// Interval is how often the pacer looks at the heap (the live figure changes only at each collection).
	// Default 1s.
	Interval time.Duration
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
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	p := &Pacer{opts: o, current: o.Percent,
		gauge: prometheus.NewGauge(prometheus.GaugeOpts{Name: "memcluster_gc_percent",
			Help: "GOGC the node runs with: the collector's headroom over the live heap, sized to the heap without its vector rows and Pebble's buffers"}),
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}}
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
	next := Percent(p.opts.Percent, p.opts.Floor, p.sample[0].Value.Uint64(), p.held)
	// Small moves are left alone (each call recomputes the pacer's goal under the heap lock), but not a return to base.
	if next == p.current || (abs(next-p.current) < 3 && next != p.opts.Percent) {
		return
	}
	debug.SetGCPercent(next)
	p.opts.Logger.Debug("gc percent", "from", p.current, "to", next)
	p.current = next
	p.gauge.Set(float64(next))
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

func abs(x int) int { return max(x, -x) }
