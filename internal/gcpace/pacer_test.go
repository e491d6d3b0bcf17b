package gcpace

import (
	"context"
	"errors"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		name        string
		base, floor int
		live        uint64
		held        int64
		want        int
	}{
		{"before the first collection", 100, 10, 0, 500, 100},
		{"nothing at rest", 100, 10, 1000, 0, 100},
		{"a third at rest", 100, 10, 3000, 1000, 66},
		{"most at rest", 100, 10, 2200, 1390, 36},
		{"rows counted after the last collection", 100, 10, 1000, 1500, 10},
		{"floor", 100, 10, 1000, 950, 10},
		{"GOGC=200", 200, 10, 2000, 1000, 100},
		{"floor above base is base", 5, 5, 1000, 900, 5},
	} {
		if got := Percent(c.base, c.floor, c.live, c.held); got != c.want {
			t.Errorf("%s: Percent(%d, %d, %d, %d) = %d, want %d", c.name, c.base, c.floor, c.live, c.held, got, c.want)
		}
	}
}

func TestHeadroomPercent(t *testing.T) {
	for _, c := range []struct {
		name string
		min  int64
		live uint64
		want int
	}{
		{"no floor", -1, 10 << 20, 0},
		{"before the first collection", 256 << 20, 0, 0},
		{"a small heap grows by the floor", 256 << 20, 64 << 20, 400},
		{"rounded up", 100, 3, 3334},
		{"a large heap's own headroom is larger", 256 << 20, 4 << 30, 7},
		{"bounded", MaxMinHeadroom, 1, maxPercent},
	} {
		if got := headroomPercent(c.min, c.live); got != c.want {
			t.Errorf("%s: headroomPercent(%d, %d) = %d, want %d", c.name, c.min, c.live, got, c.want)
		}
	}
}

// A small live heap runs above the base GOGC so that it may grow by MinHeadroom before its next collection.
func TestSmallHeapGetsTheMinimumHeadroom(t *testing.T) {
	t.Setenv("GOGC", "")
	runtime.GC()
	p, err := New(Options{Held: func() int64 { return 0 }, MinHeadroom: 1 << 40, Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer debug.SetGCPercent(100)
	p.step()
	if g := gauge(t, p); g <= 100 {
		t.Fatalf("GOGC %v with a terabyte of minimum headroom, want far above 100", g)
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := New(Options{}); !errors.Is(err, ErrNoHeld) {
		t.Fatalf("New without Held: %v, want ErrNoHeld", err)
	}
	held := func() int64 { return 0 }
	// GOGC as the runtime reads it: what it cannot parse is 100, negative or off is off.
	for v, want := range map[string]int{"": 100, "fast": 100, "OFF": 100, "250": 250, "off": -1, "-1": -1, "0": -1} {
		t.Setenv("GOGC", v)
		p, err := New(Options{Held: held})
		switch {
		case err != nil:
			t.Fatalf("GOGC=%q: %v", v, err)
		case want < 0 && p != nil:
			t.Fatalf("GOGC=%q: a pacer at %d, want none", v, p.opts.Percent)
		case want >= 0 && (p == nil || p.opts.Percent != want):
			t.Fatalf("GOGC=%q: pacer %+v, want percent %d", v, p, want)
		}
	}
	t.Setenv("GOGC", "")
	p, err := New(Options{Held: held, Percent: 50, Floor: 80})
	if err != nil {
		t.Fatal(err)
	}
	if p.opts.Floor != 50 || p.opts.Interval != time.Second || p.opts.IdleRelease != 10*time.Second ||
		p.opts.MinHeadroom != DefaultMinHeadroom {
		t.Fatalf("defaults: floor %d interval %v idle release %v min headroom %d", p.opts.Floor, p.opts.Interval,
			p.opts.IdleRelease, p.opts.MinHeadroom)
	}
}

// The pacer lowers GOGC on this process's heap as the rows it is told of grow, and gives GOGC back on stop.
func TestRunFollowsHeldBytes(t *testing.T) {
	t.Setenv("GOGC", "")
	rows := make([]float32, 32<<20) // 128 MiB, pointer-free and live: what vector slabs are
	runtime.GC()
	reg := prometheus.NewRegistry()
	p, err := New(Options{Held: func() int64 { return int64(4 * len(rows)) }, Interval: 5 * time.Millisecond, Registry: reg,
		MinHeadroom: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for gauge(t, p) >= 50 {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC still %v with 128 MiB of rows held", gauge(t, p))
		}
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC after stop %d, want 100", got)
	}
	runtime.KeepAlive(rows)
}

func gauge(t *testing.T, p *Pacer) float64 {
	t.Helper()
	var m dto.Metric
	if err := p.gauge.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

// An idle heap is collected and given back once per idle spell: after IdleRelease without IdleAllocs allocated
// an Interval, and again only after a collection that activity brought.
func TestIdleHeapIsGivenBack(t *testing.T) {
	t.Setenv("GOGC", "")
	p, err := New(Options{Held: func() int64 { return 0 }, IdleRelease: 10 * time.Second, IdleAllocs: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var cycles, releases uint64 = 7, 0
	p.idle.release = func() uint64 { releases++; cycles++; return cycles }
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var allocs uint64 = 100
	for i, s := range []struct {
		at       time.Duration
		alloc    uint64
		gc       bool
		releases uint64
	}{
		{0, 0, false, 0},                      // the first look: nothing to compare with
		{time.Second, 2 << 20, false, 0},      // busy
		{2 * time.Second, 512, false, 0},      // idle from here
		{7 * time.Second, 0, false, 0},        // idle 5 s
		{12 * time.Second, 1 << 10, false, 1}, // idle 10 s: given back
		{13 * time.Second, 0, false, 1},       // still idle, no collection since: nothing more
		{30 * time.Second, 0, false, 1},       //
		{31 * time.Second, 8 << 20, true, 1},  // writes, and a collection
		{32 * time.Second, 0, false, 1},       // idle again from here
		{41 * time.Second, 0, false, 1},       //
		{42 * time.Second, 0, false, 2},       // 10 s: given back again
	} {
		allocs += s.alloc
		if s.gc {
			cycles++
		}
		p.releaseIfIdle(1<<30, cycles, allocs, t0.Add(s.at))
		if releases != s.releases {
			t.Fatalf("step %d (%v): %d releases, want %d", i, s.at, releases, s.releases)
		}
	}
	real := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(real)
	if got := freeOSMemory(); got <= real[0].Value.Uint64() { // the real release collects, and says so
		t.Fatalf("collections %d after a release, %d before", got, real[0].Value.Uint64())
	}
	p.opts.IdleRelease = -1
	p.idle.since = t0
	p.releaseIfIdle(1<<30, cycles+1, allocs, t0.Add(time.Hour))
	if releases != 2 {
		t.Fatal("released with IdleRelease negative")
	}
}
