package fulltext

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// Searches with users' postings cached between them find what searches reading them afresh find, hits and
// scores, while batches put, replace and delete documents and merges replace segments; the cache stays within
// its bytes, and what it holds stays readable after the segments it came from are merged away and closed.
func TestUserPostingsCacheFollowsWritesAndMerges(t *testing.T) {
	ctx := context.Background()
	cached := openTest(t, t.TempDir(), Options{SettleAfter: -1, SettleAbove: 1, UserPostingsCache: 4 << 10})
	fresh := openTest(t, t.TempDir(), Options{SettleAfter: -1, UserPostingsCache: -1})
	users := []string{"ann", "bob", "cat", "dan"}
	r := rand.New(rand.NewPCG(3, 4))
	text := func() string {
		w := make([]string, 3+r.IntN(8))
		for i := range w {
			w[i] = denseVocab[r.IntN(len(denseVocab))]
		}
		return strings.Join(w, " ")
	}
	next := 0
	var live []string
	for round := 0; round < 12; round++ {
		var put []Doc
		var del []string
		for range 50 + r.IntN(200) {
			u := users[r.IntN(len(users))]
			put = append(put, Doc{ID: fmt.Sprintf("%s-%d", u, next), UserID: u, Type: "episodic", Text: text()})
			live = append(live, put[len(put)-1].ID)
			next++
		}
		for i := 0; i < 30 && len(live) > 0; i++ {
			j := r.IntN(len(live))
			id := live[j]
			if r.IntN(2) == 0 {
				del = append(del, id)
				live = append(live[:j], live[j+1:]...)
			} else {
				u, _, _ := strings.Cut(id, "-")
				put = append(put, Doc{ID: id, UserID: u, Type: "episodic", Text: text()})
			}
		}
		mustApply(t, cached, put, del...)
		mustApply(t, fresh, put, del...)
		if round%4 == 3 {
			cached.WaitPersisted()
			if err := cached.Settle(ctx); err != nil {
				t.Fatal(err)
			}
			runtime.GC()
		}
		for _, u := range users {
			for range 3 {
				q := Query{UserID: u, Text: text(), K: 1000} // every match: a cut at k would fall between ties
				// Ties are in document order, which differs between two indexes given the same batches.
				got, want := byScore(mustSearch(t, cached, q)), byScore(mustSearch(t, fresh, q))
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("round %d, %s %q:\n cached %v\n fresh  %v", round, u, q.Text, got, want)
				}
			}
		}
		c := cached.users
		c.mu.Lock()
		if c.bytes > c.max {
			t.Errorf("round %d: %d bytes cached, bound %d", round, c.bytes, c.max)
		}
		var charged uint64
		for _, e := range c.lru.Values() {
			charged += e.size
			if e.bm != nil {
				_ = e.bm.ToArray() // the cached bitmaps own their memory: no segment's mapped file is read
			}
		}
		if charged != c.bytes {
			t.Errorf("round %d: entries charged %d bytes, the count says %d", round, charged, c.bytes)
		}
		c.mu.Unlock()
	}
	files, _ := cached.Segments()
	t.Logf("%d segments, %d entries of %d bytes cached, %d hits", files, cached.users.lru.Len(), cached.users.bytes, cached.users.counts.Hits())
	if cached.users.counts.Hits() == 0 || cached.users.lru.Len() == 0 {
		t.Errorf("the cache was not used: %d hits, %d entries", cached.users.counts.Hits(), cached.users.lru.Len())
	}
}

// byScore orders hits by score, then id.
func byScore(hits []Hit) []Hit {
	slices.SortFunc(hits, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return hits
}

// Searches share the cache while batches land and merges run: run with -race.
func TestUserPostingsCacheConcurrentSearches(t *testing.T) {
	ix := openTest(t, t.TempDir(), Options{SettleAfter: -1, UserPostingsCache: 4 << 10})
	users := []string{"ann", "bob", "cat"}
	doc := func(i int) Doc {
		u := users[i%len(users)]
		return Doc{ID: fmt.Sprintf("%s-%d", u, i), UserID: u, Type: "episodic",
			Text: denseVocab[i%len(denseVocab)] + " " + denseVocab[(i/7)%len(denseVocab)]}
	}
	done := make(chan struct{})
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				if _, err := ix.Search(Query{UserID: users[(g+i)%len(users)], Text: denseVocab[i%len(denseVocab)]}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for batch := range 40 {
		var put []Doc
		for i := range 50 {
			put = append(put, doc(batch*50+i))
		}
		var del []string
		if batch > 0 {
			del = append(del, doc((batch-1)*50).ID)
		}
		mustApply(t, ix, put, del...)
	}
	close(done)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// Every user's count by cached segments is the term reader's.
	r, err := ix.scorch().Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, u := range users {
		_, want, _, err := userStats(context.Background(), r, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, got, _, err := userStats(context.Background(), r, u, snapshotDocs(t, ix, r, u)); err != nil || got != want {
			t.Errorf("%s: %d documents by cached segments (%v), %d by the term reader", u, got, err, want)
		}
	}
}
