package storage

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// The node is overloaded from high sublevels (or a stall) until level 0 is back at two fewer and no stall is
// under way; compactions are urgent from two below high.
func TestWritePressureHoldsUntilLevelZeroDrains(t *testing.T) {
	p := newWritePressure(10)
	steps := []struct {
		sublevels    int
		stalled      bool
		over, urgent bool
	}{
		{4, false, false, false},
		{8, false, false, true},
		{10, false, true, true},
		{9, false, true, true}, // still over: not back at 8
		{8, false, false, true},
		{9, false, false, true}, // not over again before 10
		{3, true, true, true},   // a stall holds writes whatever level 0 holds, and compactions are urgent
		{3, false, false, false},
	}
	for i, s := range steps {
		p.update(s.sublevels, s.stalled)
		err, _ := p.state()
		if over := err != nil; over != s.over || p.urgent() != s.urgent {
			t.Fatalf("step %d (%d sublevels, stalled %v): over %v urgent %v, want %v %v", i, s.sublevels, s.stalled,
				over, p.urgent(), s.over, s.urgent)
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
		noAutoCompactions: true})
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
	if d.pressure != nil || d.WaitWritable(context.Background(), time.Minute) != nil {
		t.Fatal("writes held with the overload guard off")
	}
}
