package fulltext

import (
	"context"
	"testing"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"
)

// The user filter keeps exactly what a conjunction with the user term keeps, with the same scores, across
// segments with deleted documents; terms scoped to one user but filtered for another (as two users' colliding
// scopes would be) keep nothing.
func TestUserFilterIsTheUserConjunction(t *testing.T) {
	ix, r := denseSnapshot(t)
	ctx := context.Background()
	m := ix.b.Mapping()
	run := func(s search.Searcher, err error) map[string]float64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		sctx := &search.SearchContext{DocumentMatchPool: search.NewDocumentMatchPool(s.DocumentMatchPoolSize()+8, 0)}
		got := map[string]float64{}
		for dm, err := s.Next(sctx); dm != nil || err != nil; dm, err = s.Next(sctx) {
			if err != nil {
				t.Fatal(err)
			}
			got[dm.ID] = dm.Score
			sctx.DocumentMatchPool.Put(dm)
		}
		return got
	}
	if segs := r.(*scorch.IndexSnapshot).Segments(); len(segs) < 2 {
		t.Fatalf("%d segments: the corpus should leave several", len(segs))
	}
	for _, scopeOf := range []string{"small", "big"} {
		var terms []string
		for _, tok := range ix.analyzer.Analyze([]byte("coffee morning tea")) {
			terms = append(terms, string(userScope(scopeOf))+string(tok.Term))
		}
		stats, n, _, err := userStats(ctx, r, scopeOf, nil)
		if err != nil {
			t.Fatal(err)
		}
		// The count from the user's documents of each segment is the term reader's, deletions and all.
		if _, m, _, err := userStats(ctx, r, scopeOf, snapshotDocs(t, ix, r, scopeOf)); err != nil || m != n {
			t.Fatalf("%s: %d documents by segments (%v), %d by the term reader", scopeOf, m, err, n)
		}
		for _, user := range []string{"small", "other", "big"} {
			scored := userScored{disjunction(terms), stats}
			s, err := scored.Searcher(ctx, r, m, search.SearcherOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := run(searcher.NewFilteringSearcher(ctx, s, userFilter{snapshotDocs(t, ix, r, user)}.keep), nil)
			conj := query.NewConjunctionQuery([]query.Query{scored, unscored{term(fieldUserID, user)}})
			want := run(conj.Searcher(ctx, r, m, search.SearcherOptions{}))
			if len(got) != len(want) {
				t.Fatalf("terms of %s, filter %s: %d hits, the conjunction %d", scopeOf, user, len(got), len(want))
			}
			for id, sc := range want {
				if got[id] != sc {
					t.Errorf("terms of %s, filter %s: %s scored %v, the conjunction %v", scopeOf, user, id, got[id], sc)
				}
			}
			if (user == scopeOf) != (len(got) > 0) {
				t.Errorf("terms of %s, filter %s: %d hits", scopeOf, user, len(got))
			}
		}
	}
}
