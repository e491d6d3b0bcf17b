package fulltext

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// An index left idle after a spell of writes is merged down to SettleAbove segments, and answers every search
// as before.
func TestIdleIndexSettles(t *testing.T) {
	ix := openTest(t, t.TempDir(), Options{SettleAfter: 200 * time.Millisecond, SettleAbove: 1})
	c := newCorpus(7)
	for i := range 24 {
		batch := make([]Doc, 16)
		for j := range batch {
			batch[j] = c.doc(fmt.Sprintf("u%d", j%3), i*16+j)
		}
		mustApply(t, ix, batch)
	}
	if files, _ := ix.Segments(); files < 2 {
		t.Fatalf("%d segments after 24 synced batches: the test needs several", files)
	}
	files, _ := ix.Segments()
	t.Logf("%d segments after the batches", files)
	queries := []Query{{UserID: "u0", Text: c.words(3), K: 20}, {UserID: "u1", Text: c.words(4), K: 20},
		{UserID: "u2", Text: c.words(2), K: 5}}
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
		if after := mustSearch(t, ix, q); !slices.Equal(ids(after), ids(before[i])) {
			t.Errorf("query %d: %v after settling, %v before", i, ids(after), ids(before[i]))
		}
	}
	mustApply(t, ix, []Doc{c.doc("u0", 10_000)}) // the index takes batches after settling
}
