package fulltext

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// denseCorpus fills ix with texts of a small vocabulary, so that every query term is common, in several batches
// (so several segments), for three users, with deletes and replacements between the batches.
func denseCorpus(t *testing.T, ix *Index) {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 8))
	vocab := strings.Fields("coffee morning walk dinner berlin flight hotel river project meeting cat garden " +
		"novel train lesson paris")
	text := func() string {
		w := make([]string, 4+r.IntN(20))
		for i := range w {
			w[i] = vocab[int(math.Abs(r.NormFloat64()*4))%len(vocab)]
		}
		return strings.Join(w, " ")
	}
	users := []string{"big", "other", "small"}
	for batch := 0; batch < 6; batch++ {
		var put []Doc
		var del []string
		for i := 0; i < 1500; i++ {
			u := users[min(r.IntN(10)/4, 2)]
			if u == "small" && r.IntN(20) > 0 {
				u = "big"
			}
			put = append(put, Doc{ID: docID(u, batch*1500+i), UserID: u, Type: "episodic", Text: text()})
		}
		if batch > 0 {
			for i := 0; i < 200; i++ {
				n := r.IntN(batch * 1500)
				if r.IntN(2) == 0 {
					del = append(del, docID("big", n))
				} else {
					put = append(put, Doc{ID: docID("big", n), UserID: "big", Type: "episodic", Text: text()})
				}
			}
		}
		mustApply(t, ix, put, del...)
	}
}

// Dense scoring returns the hits, scores and order of bleve's query, over several segments with deletes.
func TestDenseMatchesBleve(t *testing.T) {
	ix := openTest(t, t.TempDir(), Options{SettleAfter: -1, MaxSegmentsPerTier: 50, DenseMinPostings: 100})
	denseCorpus(t, ix)
	ix.WaitPersisted()
	if files, mem := ix.Segments(); files+mem < 2 {
		t.Fatalf("only %d segments", files+mem)
	}
	// The first four have only common terms; the rest mix in rare ones, which bleve's query narrows to.
	queries := []string{"coffee", "coffee morning", "morning walk dinner", "coffee coffee walk",
		"berlin flight hotel river", "paris lesson", "cat garden novel train lesson paris coffee"}
	for _, user := range []string{"big", "other", "small"} {
		for n, text := range queries {
			for _, k := range []int{1, 6, 24, 200} {
				q := Query{UserID: user, Text: text, K: k}
				ix.opts.DenseMinPostings = -1
				want := mustSearch(t, ix, q)
				ix.opts.DenseMinPostings = 100
				before := ix.dense.used.Load()
				got := mustSearch(t, ix, q)
				if n < 4 && user != "small" && ix.dense.used.Load() == before {
					t.Errorf("%s %q k=%d: not scored densely", user, text, k)
				}
				if err := sameRanking(got, want); err != nil {
					t.Errorf("%s %q k=%d: %v", user, text, k, err)
				}
				for _, h := range got {
					if !strings.HasPrefix(h.ID, user+"-") {
						t.Fatalf("%s %q: hit %s of another user", user, text, h.ID)
					}
				}
			}
		}
	}
}

// sameRanking: the same hits in the same order with the same scores, but for hits whose scores differ in the
// last bits of a float64 (bleve sums a document's term scores in an order that sorts terms of equal document
// frequency either way), which may swap places or trade the last place.
func sameRanking(got, want []Hit) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d hits, bleve %d", len(got), len(want))
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Abs(b) }
	for i := range got {
		if !near(got[i].Score, want[i].Score) {
			return fmt.Errorf("hit %d: %s %v, bleve %s %v", i, got[i].ID, got[i].Score, want[i].ID, want[i].Score)
		}
		if got[i].ID != want[i].ID {
			tie := (i > 0 && near(got[i].Score, got[i-1].Score)) || (i+1 < len(got) && near(got[i].Score, got[i+1].Score))
			if !tie || got[i].Score != want[i].Score && !near(got[i].Score, want[i].Score) {
				return fmt.Errorf("hit %d: %s, bleve %s (score %v)", i, got[i].ID, want[i].ID, got[i].Score)
			}
		}
	}
	return nil
}

// Only the plain OR of common terms is scored densely: with a filter, a Keep, or short posting lists the query
// is bleve's.
func TestDenseOnlyWhenPlain(t *testing.T) {
	ix := openTest(t, t.TempDir(), Options{SettleAfter: -1, DenseMinPostings: 100})
	denseCorpus(t, ix)
	for _, q := range []Query{
		{UserID: "big", Text: "coffee morning", K: 6, Types: []string{"episodic"}},
		{UserID: "big", Text: "coffee morning", K: 6, Keep: func(string) bool { return true }},
		{UserID: "nobody", Text: "coffee morning", K: 6},
	} {
		before := ix.dense.used.Load()
		mustSearch(t, ix, q)
		if ix.dense.used.Load() != before {
			t.Errorf("%+v: scored densely", q)
		}
	}
}
