package fulltext

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"
)

var denseVocab = strings.Fields("coffee morning walk dinner berlin flight hotel river project meeting cat garden " +
	"novel train lesson paris")

// denseSnapshot is an index of denseCorpus's documents of "big", "other" and "small" in several segments, and a
// reader of it, closed when the test ends.
func denseSnapshot(t *testing.T) (*Index, index.IndexReader) {
	t.Helper()
	ix := openTest(t, t.TempDir(), Options{SettleAfter: -1})
	denseCorpus(t, ix, "big", "other", "small")
	r, err := ix.scorch().Reader()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return ix, r
}

// snapshotDocs is user's documents in r's segments, as a search of ix reads them.
func snapshotDocs(t *testing.T, ix *Index, r index.IndexReader, user string) *userDocs {
	t.Helper()
	docs, err := ix.users.docs(r.(*scorch.IndexSnapshot), user)
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// denseCorpus fills ix with texts of a small vocabulary, so that the first words are common, in several batches
// (so several segments), for users, with deletes and replacements of the first user's documents between batches.
// The last user, if there are three, gets one document in twenty.
func denseCorpus(t *testing.T, ix *Index, users ...string) {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 8))
	text := func() string {
		w := make([]string, 4+r.IntN(20))
		for i := range w {
			w[i] = denseVocab[int(math.Abs(r.NormFloat64()*4))%len(denseVocab)]
		}
		return strings.Join(w, " ")
	}
	user := func() string {
		u := users[r.IntN(len(users))]
		if len(users) == 3 && u == users[2] && r.IntN(20) > 0 {
			u = users[0]
		}
		return u
	}
	for batch := 0; batch < 6; batch++ {
		var put []Doc
		var del []string
		for i := 0; i < 1500; i++ {
			u := user()
			put = append(put, Doc{ID: docID(u, batch*1500+i), UserID: u, Type: "episodic", Text: text()})
		}
		for i := 0; batch > 0 && i < 200; i++ {
			n := r.IntN(batch * 1500)
			if r.IntN(2) == 0 {
				del = append(del, docID(users[0], n))
			} else {
				put = append(put, Doc{ID: docID(users[0], n), UserID: users[0], Type: "episodic", Text: text()})
			}
		}
		mustApply(t, ix, put, del...)
	}
}

// Dense scoring returns exactly the hits, scores and order of bleve's evaluation of the same query: over several
// segments with deletes, for a user among others and for a user alone in its index, on disk and in memory.
//
// Each query runs with its lists walked through zap, decoded and kept (then again, from the cache), and decoded
// under a bound that keeps almost nothing, so entries are evicted while others are in use.
func TestDenseMatchesBleve(t *testing.T) {
	// The first four have only common terms; the next two mix in rare ones, which bleve's query narrows to (the
	// first of them has too few postings to be scored densely); the last has more terms than bleve's disjunction
	// takes before it becomes a heap.
	queries := []string{"coffee", "coffee morning", "morning walk dinner", "coffee coffee walk",
		"paris lesson", "cat garden novel train lesson paris coffee", strings.Join(denseVocab[:12], " ")}
	caches := []struct {
		name     string
		bytes    int64
		min, run int
	}{{"zap", -1, 0, 1}, {"decoded", 64 << 20, 1, 2}, {"evicting", 256 << 10, 1, 2}}
	for _, c := range []struct {
		name  string
		opts  Options
		users []string
	}{
		{"disk", Options{}, []string{"big", "other", "small"}},
		{"memory", Options{InMemory: true}, []string{"big", "other", "small"}},
		{"alone", Options{}, []string{"big"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.opts.SettleAfter, c.opts.MaxSegmentsPerTier, c.opts.DenseMinPostings = -1, 50, 100
			ix := openTest(t, t.TempDir(), c.opts)
			denseCorpus(t, ix, c.users...)
			ix.WaitPersisted()
			if files, mem := ix.Segments(); files+mem < 2 {
				t.Fatalf("only %d segments", files+mem)
			}
			for _, cache := range caches {
				ix.decoded = newTermLists(cache.bytes, cache.min, nil)
				for _, user := range c.users {
					for n, text := range queries {
						for _, k := range []int{1, 6, 24, 200} {
							q := Query{UserID: user, Text: text, K: k}
							ix.opts.DenseMinPostings = -1
							want := mustSearch(t, ix, q)
							ix.opts.DenseMinPostings = 100
							for run := range cache.run {
								before := ix.dense.used.Load()
								got := mustSearch(t, ix, q)
								if dense := ix.dense.used.Load() > before; dense != ((n < 4 || n == 5) && user != "small") {
									t.Errorf("%s %s %q k=%d: scored densely %v", cache.name, user, text, k, dense)
								}
								if fmt.Sprint(got) != fmt.Sprint(want) {
									t.Errorf("%s run %d %s %q k=%d:\n dense %v\n bleve %v", cache.name, run, user, text, k, got, want)
								}
							}
						}
					}
				}
				if hits := ix.decoded.counts.Hits(); (hits > 0) != (cache.name != "zap") {
					t.Errorf("%s: %d lists found decoded", cache.name, hits)
				}
				if evicted := ix.decoded.counts.Evictions(); (evicted > 0) != (cache.name == "evicting") {
					t.Errorf("%s: %d lists evicted", cache.name, evicted)
				}
				if ix.decoded.bytes > ix.decoded.max {
					t.Errorf("%s: %d bytes kept, over %d", cache.name, ix.decoded.bytes, ix.decoded.max)
				}
			}
		})
	}
}

// A document enters the k best only if the user's own posting list holds it: terms scoped to one user but
// searched for another (as two users' colliding scopes would be) find nothing.
func TestDenseKeepsOnlyTheUsersDocuments(t *testing.T) {
	ix, r := denseSnapshot(t)
	stats, n, total, err := userStats(context.Background(), r, "big", nil)
	if err != nil {
		t.Fatal(err)
	}
	var terms []string
	for _, tok := range ix.analyzer.Analyze([]byte("coffee morning")) {
		terms = append(terms, string(userScope("big"))+string(tok.Term))
	}
	for _, user := range []string{"big", "other"} {
		q := denseQuery{mine: snapshotDocs(t, ix, r, user), terms: terms, stats: stats, k: 24, bufs: &denseBuffers{}}
		s, err := q.searcher(context.Background(), 1, n, total)
		if err != nil || s == nil {
			t.Fatalf("%s: searcher %v, %v", user, s, err)
		}
		ctx := &search.SearchContext{DocumentMatchPool: search.NewDocumentMatchPool(s.DocumentMatchPoolSize(), 0)}
		var got []string
		for dm, err := s.Next(ctx); dm != nil || err != nil; dm, err = s.Next(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, dm.ID)
		}
		if want := map[string]int{"big": 24, "other": 0}[user]; len(got) != want {
			t.Errorf("%s: %d hits %v, want %d", user, len(got), got, want)
		}
	}
}

// Only the plain OR of common terms is scored densely: with a filter or a Keep the query is bleve's.
func TestDenseOnlyWhenPlain(t *testing.T) {
	ix := openTest(t, t.TempDir(), Options{SettleAfter: -1, DenseMinPostings: 100})
	denseCorpus(t, ix, "big", "other", "small")
	for _, q := range []Query{
		{UserID: "big", Text: "coffee morning", K: 6, Types: []string{"episodic"}},
		{UserID: "big", Text: "coffee morning", K: 6, Keep: func(string) bool { return true }},
		{UserID: "big", Text: "coffee morning", K: 6},
	} {
		before := ix.dense.used.Load()
		mustSearch(t, ix, q)
		if dense := ix.dense.used.Load() > before; dense != (q.Types == nil && q.Keep == nil) {
			t.Errorf("%+v: scored densely %v", q, dense)
		}
	}
}
