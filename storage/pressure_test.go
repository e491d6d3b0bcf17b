package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// The node is overloaded from high sublevels until level 0 is back at two fewer, and while any write stall is
// under way (two may be, and one ending does not end the other); a stall does not take level 0's gap with it.
// Compactions are urgent from two below high, and while the node is overloaded.
func TestWritePressureHoldsUntilLevelZeroDrains(t *testing.T) {
	p := newWritePressure(10)
	steps := []struct {
		sublevels    int // -1: unchanged
		stall        int // +1 a stall begins, -1 one ends
		over, urgent bool
	}{
		{4, 0, false, false},
		{8, 0, false, true},
		{10, 0, true, true},
		{9, 0, true, true}, // still over: not back at 8
		{8, 0, false, true},
		{9, 0, false, true}, // not over again before 10
		{3, 0, false, false},
		{-1, +1, true, true}, // a stall holds writes whatever level 0 holds
		{-1, +1, true, true}, // a second writer held too
		{-1, -1, true, true}, // one stall over, the other still under way
		{9, 0, true, true},
		{-1, -1, false, true}, // the stalls over at 9 sublevels: level 0 never reached 10, so writes go on
	}
	for i, s := range steps {
		if s.sublevels >= 0 {
			p.update(s.sublevels)
		}
		if s.stall != 0 {
			p.stall(s.stall)
		}
		err, _ := p.state(true)
		if over := err != nil; over != s.over || p.urgent() != s.urgent {
			t.Fatalf("step %d (%+v): over %v urgent %v, want %v %v", i, s, over, p.urgent(), s.over, s.urgent)
		}
		if err != nil && !errors.Is(err, ErrOverloaded) {
			t.Fatalf("step %d: %v does not wrap ErrOverloaded", i, err)
		}
	}
	if (*writePressure)(nil).urgent() {
		t.Fatal("no pressure watched, yet urgent")
	}
}

// A real Pebble whose level 0 reaches the threshold holds writes: WaitWritable refuses after its wait, naming
// level 0, and a waiter is let through once a compaction drains it.
func TestWaitWritableFollowsLevelZero(t *testing.T) {
	d, err := Open("db", Options{FS: vfs.NewMem(), Logger: slog.New(slog.DiscardHandler), OverloadSublevels: 2,
		DisableAutoCompactions: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	for i := range 2 { // two flushed tables over the same keys: two sublevels
		for _, k := range []string{"a", "z"} {
			if err := d.db.Set([]byte(k), []byte{byte(i)}, pebble.Sync); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the overload at two sublevels", func() bool { return d.WaitWritable(ctx, 0) != nil })
	err = d.WaitWritable(ctx, time.Millisecond)
	if !errors.Is(err, ErrOverloaded) || !strings.Contains(err.Error(), "level 0 holds 2 sublevels") {
		t.Fatalf("WaitWritable: %v, want ErrOverloaded naming level 0's 2 sublevels", err)
	}
	if !d.DiskStats().Overloaded {
		t.Fatal("DiskStats does not show the overload")
	}
	done := make(chan error, 1)
	go func() { done <- d.WaitWritable(ctx, time.Minute) }()
	if err := d.db.Compact(ctx, []byte("a"), []byte("zz"), false); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the waiting write after the compaction: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting write was not let through after level 0 drained")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := d.WaitWritable(cctx, time.Minute); err != nil {
		t.Fatalf("WaitWritable on a drained level 0: %v", err)
	}
}

// With OverloadSublevels negative nothing is watched and writes are never held.
func TestWaitWritableOff(t *testing.T) {
	d, err := Open("db", Options{FS: vfs.NewMem(), Logger: slog.New(slog.DiscardHandler), OverloadSublevels: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.health.pressure != nil || d.WaitWritable(context.Background(), time.Minute) != nil {
		t.Fatal("writes held with the overload guard off")
	}
}

// A backlog set on the DB holds writes from its high mark until it is back at three quarters of it, naming the
// count; it does not make compactions urgent, and replacing it with none lets writes in at once.
func TestBacklogHoldsWrites(t *testing.T) {
	d, err := Open("db", Options{FS: vfs.NewMem(), Logger: slog.New(slog.DiscardHandler), OverloadSublevels: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var backlog atomic.Int64
	d.SetBacklog("changes for the full-text index", backlog.Load, 1000)
	ctx := context.Background()
	for _, s := range []struct {
		n    int64
		over bool
	}{{999, false}, {1000, true}, {800, true}, {750, false}, {999, false}, {5000, true}} {
		backlog.Store(s.n)
		waitFor(t, fmt.Sprintf("the watcher to read %d", s.n), func() bool {
			p := d.health.pressure
			p.mu.Lock()
			defer p.mu.Unlock()
			return p.backlog == s.n
		})
		want := fmt.Sprintf("%d changes for the full-text index wait; writes are taken again at 750", s.n)
		waitFor(t, fmt.Sprintf("the gate at a backlog of %d", s.n), func() bool {
			err := d.WaitWritable(ctx, 0)
			if !s.over {
				return err == nil
			}
			return errors.Is(err, ErrOverloaded) && strings.Contains(err.Error(), want)
		})
		if s.over && d.health.pressure.urgent() {
			t.Fatal("a backlog made compactions urgent")
		}
		if s.over { // a command that adds nothing to the backlog is not held by it; one that does is
			prune, err := EncodePrune(PrunePayload{BeforeMS: 1})
			if err != nil {
				t.Fatal(err)
			}
			if err := d.WaitWritableFor(ctx, 0, prune); err != nil {
				t.Fatalf("a prune held by the backlog: %v", err)
			}
			put, err := EncodePut(nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.WaitWritableFor(ctx, 0, put); !errors.Is(err, ErrOverloaded) {
				t.Fatalf("a put at a backlog of %d: %v, want ErrOverloaded", s.n, err)
			}
		}
	}
	d.SetBacklog("", nil, 0)
	if err := d.WaitWritable(ctx, 0); err != nil {
		t.Fatalf("backlog removed: %v", err)
	}
}
