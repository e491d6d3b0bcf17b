package fulltext

import (
	"context"
	"slices"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"
)

// shapedText is the whole search: the text as an OR of its terms, scored, conjoined with the
// unscored filters. It is a query.Query, so its Searcher runs inside bleve's search, on bleve's
// reader (one snapshot, and no race with Close). It analyses the text once, drops repeated terms,
// looks up each term's df on that snapshot, keeps the MaxQueryTerms rarest, and splits common from
// rare terms:
//
//	no common or no rare term: Conjunction{ Disjunction(terms), unscored(Conjunction(filters)) }
//	otherwise:                 Conjunction{ Disjunction(terms), unscored(Conjunction(Disjunction(rare terms), filters...)) }
//	the first, with the user term the only filter: userFilter(Disjunction(terms)) (userfilter.go), or dense (dense.go)
//	the second, likewise: userFilter(Conjunction{ Disjunction(terms), unscored(Disjunction(rare terms)) })
//	either, when every document of the index is the user's: without the user term at all
//
// The first form scores exactly as bleve's OR match query. In the second, the rare terms only
// narrow the candidates (one roaring-bitmap union, intersected with the filters): a candidate keeps
// exactly the score the first form gives it, and common terms' postings are skipped (Advance)
// instead of scored.
type shapedText struct {
	user     string
	text     string
	analyzer analysis.Analyzer
	opts     *Options
	filters  []query.Query // at least the user term
	k        int           // the hits wanted, when the collector needs to see only the k best (else 0)
	dense    *denseBuffers
	users    *userPostings
	decoded  *termLists
}

func (q *shapedText) Searcher(ctx context.Context, r index.IndexReader, m mapping.IndexMapping,
	options search.SearcherOptions) (search.Searcher, error) {
	scope := string(userScope(q.user))
	var terms []string
	seen := map[string]bool{}
	for _, tok := range q.analyzer.Analyze([]byte(q.text)) {
		t := scope + string(tok.Term)
		if !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	if len(terms) == 0 {
		return searcher.NewMatchNoneSearcher(r)
	}
	// The user's documents of each segment: its count for the statistics, the user filter's and dense scoring's
	// look-ups. Without a scorch snapshot, the count comes from a term reader and the filter is a conjunction.
	var docs *userDocs
	if is, ok := r.(*scorch.IndexSnapshot); ok {
		var err error
		if docs, err = q.users.docs(is, q.user); err != nil {
			return nil, err
		}
	}
	stats, n, total, err := userStats(ctx, r, q.user, docs)
	if err != nil {
		return nil, err
	}
	all, rare, err := q.shape(ctx, r, terms, n)
	if err != nil {
		return nil, err
	}
	if len(q.filters) == 1 && q.k > 0 && options.Score != "none" && !options.Explain && !options.IncludeTermVectors {
		// Either form, with the user the only filter, scored term at a time when its lists are long (dense.go).
		d := denseQuery{mine: docs, terms: all, rare: rare, stats: stats, k: q.k, bufs: q.dense, decoded: q.decoded}
		if s, err := d.searcher(ctx, q.opts.DenseMinPostings, n, total); err != nil || s != nil {
			return s, err
		}
	}
	if len(rare) == 0 && len(q.filters) == 1 {
		if n == total {
			// The user term would keep every document: the conjunction's leapfrogging would cost a third of the
			// search for nothing (a user alone in its shard, as in the peer benchmark). Scores are the same.
			return userScored{disjunction(all), stats}.Searcher(ctx, r, m, options)
		}
		if docs != nil && !q.opts.conjoinUser {
			// The user filter as a look-up of each match instead of a conjunction (userfilter.go); scores are
			// the same, since the user term is unscored in the conjunction.
			s, err := userScored{disjunction(all), stats}.Searcher(ctx, r, m, options)
			if err != nil {
				return nil, err
			}
			return searcher.NewFilteringSearcher(ctx, s, userFilter{docs}.keep), nil
		}
	}
	cands, filterUser := q.filters, false
	if len(rare) > 0 && len(q.filters) == 1 {
		// The rare terms' candidates need the user term no more than the plain form does: not at all when every
		// document is the user's, and as a look-up of each match rather than a leapfrog through its postings
		// otherwise. Scores are the same: the candidates are unscored. A small saving: under 8 clients searching
		// one user's 100k memories, bleve's conjunctions went from 16.0 to 14.6 % of the shard leader's CPU (most
		// of them is the scored disjunction advancing to the candidates).
		switch {
		case n == total:
			cands = nil
		case docs != nil && !q.opts.conjoinUser:
			cands, filterUser = nil, true
		}
	}
	if len(rare) > 0 {
		cands = append([]query.Query{disjunction(rare)}, cands...)
	}
	var cand query.Query = cands[0]
	if len(cands) > 1 {
		cand = query.NewConjunctionQuery(cands)
	}
	s, err := query.NewConjunctionQuery([]query.Query{userScored{disjunction(all), stats}, unscored{cand}}).Searcher(ctx, r, m, options)
	if err != nil || !filterUser {
		return s, err
	}
	return searcher.NewFilteringSearcher(ctx, s, userFilter{docs}.keep), nil
}

// shape returns the terms to score and, when the query mixes common and rare terms, the rare
// ones (nil otherwise). n is the user's document count.
func (q *shapedText) shape(ctx context.Context, r index.IndexReader, terms []string, n uint64) (all, rare []string, err error) {
	capTerms := q.opts.MaxQueryTerms > 0 && len(terms) > q.opts.MaxQueryTerms
	// df <= n: for a user this small no term can be common.
	split := q.opts.CommonTermFraction > 0 && len(terms) > 1 && n > uint64(q.opts.CommonTermMinDF)
	if !capTerms && !split {
		return terms, nil, nil
	}
	df := make(map[string]uint64, len(terms))
	for _, t := range terms {
		tfr, err := r.TermFieldReader(ctx, []byte(t), fieldText, false, false, false)
		if err != nil {
			return nil, nil, err
		}
		df[t] = tfr.Count()
		if err := tfr.Close(); err != nil {
			return nil, nil, err
		}
	}
	if capTerms {
		// Stable: equal df keeps the query's word order.
		sorted := slices.Clone(terms)
		slices.SortStableFunc(sorted, func(a, b string) int { return cmpU64(df[a], df[b]) })
		keep := map[string]bool{}
		for _, t := range sorted[:q.opts.MaxQueryTerms] {
			keep[t] = true
		}
		terms = slices.DeleteFunc(terms, func(t string) bool { return !keep[t] })
	}
	if !split || len(terms) < 2 {
		return terms, nil, nil
	}
	limit := max(uint64(q.opts.CommonTermFraction*float64(n)), uint64(q.opts.CommonTermMinDF))
	for _, t := range terms {
		if df[t] <= limit {
			rare = append(rare, t)
		}
	}
	if len(rare) == len(terms) {
		rare = nil // nothing common: the plain disjunction is already the cheap query
	}
	return terms, rare, nil
}

// disjunction is what bleve's OR match query builds: term queries on the text field, min 1.
func disjunction(terms []string) query.Query {
	qs := make([]query.Query, len(terms))
	for i, t := range terms {
		tq := query.NewTermQuery(t)
		tq.SetField(fieldText)
		tq.SetBoost(1)
		qs[i] = tq
	}
	d := query.NewDisjunctionQuery(qs)
	d.SetMin(1)
	d.SetBoost(1)
	return d
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// userScored scores q, the text terms, with the user's own BM25 statistics (userStats), as bleve does for an
// index whose statistics come from elsewhere (its pre-search of several indexes). The other clauses keep
// bleve's own: they are not scored.
type userScored struct {
	q     query.Query
	stats *search.BM25Stats
}

func (u userScored) Searcher(ctx context.Context, r index.IndexReader, m mapping.IndexMapping,
	options search.SearcherOptions) (search.Searcher, error) {
	return u.q.Searcher(context.WithValue(ctx, search.BM25StatsKey, u.stats), r, m, options)
}

// unscored is a query evaluated without scores: bleve then builds term and multi-term searchers
// as bare roaring bitmaps (scorch's "unadorned" optimization: a disjunction becomes one bitmap
// union, no freq/norm decoding). Its searcher has weight 0 and scores 0, so as a child of a scored
// conjunction it only narrows the candidates: the conjunction leapfrogs over the docs it excludes
// instead of scoring them and filtering afterwards.
type unscored struct{ q query.Query }

func (u unscored) Searcher(ctx context.Context, r index.IndexReader, m mapping.IndexMapping,
	options search.SearcherOptions) (search.Searcher, error) {
	s, err := u.q.Searcher(ctx, r, m, search.SearcherOptions{Score: "none"})
	if err != nil {
		return nil, err
	}
	return zeroWeight{s}, nil
}

// zeroWeight keeps a searcher out of the query norm (and so out of every other clause's score).
type zeroWeight struct{ search.Searcher }

func (zeroWeight) Weight() float64        { return 0 }
func (zeroWeight) SetQueryNorm(_ float64) {}
