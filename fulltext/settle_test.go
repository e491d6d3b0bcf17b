package fulltext

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/index/scorch"
)

// An index left idle after a spell of writes is merged down to SettleAbove segments, and finds the same
// documents as before. (Not in the same order: bleve's average field length is the sum of the segments'
// dictionary sizes over the documents, so merging moves every score a little; DESIGN.md.)
func TestIdleIndexSettles(t *testing.T) {
	ix := openTest(t, t.TempDir(), Options{SettleAfter: 200 * time.Millisecond, SettleAbove: 1})
	c := newCorpus(7)
	applyBatches(t, ix, c, 24, 16, func(j int) string { return fmt.Sprintf("u%d", j%3) })
	if files, _ := ix.Segments(); files < 2 {
		t.Fatalf("%d segments after 24 synced batches: the test needs several", files)
	}
	files, _ := ix.Segments()
	t.Logf("%d segments after the batches", files)
	queries := []Query{{UserID: "u0", Text: c.words(3), K: 1000}, {UserID: "u1", Text: c.words(4), K: 1000},
		{UserID: "u2", Text: c.words(2), K: 1000}}
	before := make([][]Hit, len(queries))
	for i, q := range queries {
		before[i] = mustSearch(t, ix, q)
	}

	deadline := time.Now().Add(30 * time.Second)
	for files, _ := ix.Segments(); files > 1; files, _ = ix.Segments() {
		if time.Now().After(deadline) {
			t.Fatalf("still %d segments 30 s after the last batch", files)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i, q := range queries {
		if after := mustSearch(t, ix, q); len(before[i]) == 0 || !sameSet(ids(after), ids(before[i])) {
			t.Errorf("query %d: %v after settling, %v before", i, ids(after), ids(before[i]))
		}
	}
	mustApply(t, ix, []Doc{c.doc("u0", 10_000)}) // the index takes batches after settling
}

// Close ends a settle under way, or one about to start, and returns.
func TestCloseDuringSettle(t *testing.T) {
	for _, after := range []time.Duration{time.Millisecond, 20 * time.Millisecond} {
		ix, err := Open(t.TempDir(), Options{NoSync: true, SettleAfter: after, SettleAbove: 1, PersisterNap: -1})
		if err != nil {
			t.Fatal(err)
		}
		c := newCorpus(3)
		applyBatches(t, ix, c, 12, 32, func(int) string { return "u" })
		time.Sleep(after)
		done := make(chan error, 1)
		go func() { done <- ix.Close() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Close: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("Close did not return within 20 s (settle after %s)", after)
		}
	}
}

// Indexes sharing Settlers settle one at a time, and each is settled in its turn.
func TestSettlersBoundSettles(t *testing.T) {
	g := NewSettlers(1)
	ixs := make([]*Index, 3)
	for i := range ixs {
		ixs[i] = openTest(t, t.TempDir(), Options{SettleAfter: -1, SettleAbove: 1, Settlers: g})
		c := newCorpus(uint64(i))
		applyBatches(t, ixs[i], c, 12, 16, func(int) string { return "u" })
		if files, _ := ixs[i].Segments(); files < 2 {
			t.Fatalf("index %d: %d segments; the test needs several", i, files)
		}
	}
	errs := make(chan error, len(ixs))
	for _, ix := range ixs {
		go func() { errs <- ix.Settle(context.Background()) }()
	}
	for range ixs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, ix := range ixs {
		if files, _ := ix.Segments(); files > 1 {
			t.Errorf("index %d: %d segments after its settle", i, files)
		}
	}
	if p := g.peak.Load(); p != 1 {
		t.Errorf("%d settles at once, want 1", p)
	}
}

// stallMerges, while set, makes scorch's merger of an index opened with eventCallback "stall-merges" refuse to
// merge, as a merge that keeps failing (a full disk) leaves it retrying.
var stallMerges atomic.Bool

func init() {
	scorch.RegistryEventCallbacks["stall-merges"] = func(e scorch.Event) bool {
		if e.Kind == scorch.EventKindPreMergeCheck && stallMerges.Load() {
			time.Sleep(5 * time.Millisecond)
			return false
		}
		return true
	}
}

// An index whose merge never finishes holds its node's turn only for settleHold: the others settle after it.
func TestStalledSettleGivesUpItsTurn(t *testing.T) {
	g := NewSettlers(1)
	open := func(callback string) *Index {
		ix := openTest(t, t.TempDir(), Options{SettleAfter: -1, SettleAbove: 1, Settlers: g,
			settleHold: 300 * time.Millisecond, eventCallback: callback})
		c := newCorpus(5)
		applyBatches(t, ix, c, 12, 16, func(int) string { return "u" })
		return ix
	}
	stalled, other := open("stall-merges"), open("")
	stallMerges.Store(true)
	t.Cleanup(func() { stallMerges.Store(false) }) // before the indexes close (cleanups run last first)
	errs := make(chan error, 1)
	go func() { errs <- stalled.Settle(context.Background()) }()
	for g.active.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	if err := other.Settle(context.Background()); err != nil {
		t.Fatalf("settle after a stalled one: %v", err)
	}
	if files, _ := other.Segments(); files > 1 {
		t.Errorf("%d segments after settling", files)
	}
	if err := <-errs; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("stalled settle: %v, want its hold to run out", err)
	}
}

// applyBatches applies n batches of size documents from c, each its own segment; user names the j-th
// document's user within its batch.
func applyBatches(t *testing.T, ix *Index, c *corpus, n, size int, user func(j int) string) {
	t.Helper()
	for i := range n {
		batch := make([]Doc, size)
		for j := range batch {
			batch[j] = c.doc(user(j), i*size+j)
		}
		mustApply(t, ix, batch)
	}
}

// An idle index of no more than SettleAbove segments is settled into one once the segments other than its
// largest hold SettleShare of its documents, and left as it is while they hold less.
func TestSettleBySmallerSegmentsShare(t *testing.T) {
	ix := openTest(t, t.TempDir(), Options{SettleAfter: -1, SettleShare: 0.2})
	c := newCorpus(7)
	next := 0
	add := func(n int) { // one persisted segment of n documents
		t.Helper()
		batch := make([]Doc, n)
		for j := range batch {
			batch[j] = c.doc(fmt.Sprintf("u%d", j%3), next)
			next++
		}
		mustApply(t, ix, batch)
		ix.WaitPersisted()
	}
	settle := func(want uint64) {
		t.Helper()
		if err := ix.Settle(context.Background()); err != nil {
			t.Fatal(err)
		}
		if files, _ := ix.Segments(); files != want {
			t.Fatalf("%d segments after Settle, want %d", files, want)
		}
	}
	add(200)
	add(20)
	settle(2) // 20 of 220 documents outside the largest: under the share
	add(60)
	settle(1) // 80 of 280
}
