package fulltext

import (
	"context"
	"fmt"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

// Query is a search within one user's documents. Every set filter must hold.
type Query struct {
	UserID  string
	Text    string // analysed; any term can match (OR) and BM25 ranks
	K       int    // at most K hits; 0 means Options.DefaultK
	Types   []string
	AgentID string
	RunID   string
	Tags    []string // every tag must be present
	// Keep, when set, is asked about every document that matches everything else, by id, before it is
	// ranked: a check the owner makes on its own state. The owner's time range goes here, since occurred_at
	// is not indexed (DESIGN.md, "Time ranges").
	Keep func(id string) bool
}

// Hit is one result. Score is bleve's BM25 score, comparable only within one Search.
type Hit struct {
	ID    string
	Score float64
}

// Search returns the best hits first, at most K. Text that analyses to nothing (only stop words)
// matches nothing; text that is empty or white space is ErrEmptyQuery.
func (ix *Index) Search(q Query) ([]Hit, error) {
	return ix.SearchContext(context.Background(), q)
}

// SearchContext is Search with a context that can cancel a long search.
func (ix *Index) SearchContext(ctx context.Context, q Query) ([]Hit, error) {
	k, err := ix.checkQuery(q)
	if err != nil {
		return nil, err
	}
	shaped := ix.buildQuery(q)
	var bq query.Query = shaped
	if q.Keep != nil {
		bq = &keepQuery{q: bq, keep: q.Keep}
	} else {
		// The k best are the result: dense scoring may hand the collector only those (dense.go). With Keep
		// the collector must see every match, since Keep may reject some of the best.
		shaped.k = k
	}
	req := bleve.NewSearchRequestOptions(bq, k, 0, false)
	res, err := ix.b.SearchInContext(ctx, req)
	if err != nil {
		return nil, wrap("search", err)
	}
	hits := make([]Hit, len(res.Hits))
	for i, h := range res.Hits {
		hits[i] = Hit{ID: h.ID, Score: h.Score}
	}
	return hits, nil
}

func (ix *Index) checkQuery(q Query) (int, error) {
	if strings.TrimSpace(q.Text) == "" {
		return 0, ErrEmptyQuery
	}
	if q.UserID == "" {
		return 0, fmt.Errorf("%w: query without user id", ErrInvalid)
	}
	k := q.K
	if k == 0 {
		k = ix.opts.DefaultK
	}
	if k < 0 || k > ix.opts.MaxK {
		return 0, fmt.Errorf("%w: k %d (want 1..%d)", ErrInvalid, q.K, ix.opts.MaxK)
	}
	return k, nil
}

// buildQuery is a scored conjunction of the text (the shaped OR match query of shape.go) and one
// unscored clause: the conjunction of the user term and every filter (types, agent, run, tags),
// plus the rare terms when shaping splits the query.
//
// The unscored clause has weight 0 and scores 0, so Score is the text's BM25 score alone and
// bleve's query norm is as for the text alone (TestFiltersDoNotChangeScore). Bleve evaluates it
// as roaring bitmaps (scorch's "unadorned" term readers): a type list becomes
// one bitmap union, and the clauses one bitmap intersection per segment. The scored disjunction
// then only advances to (skips to) docs in that bitmap, so other users' postings and filtered-out
// docs are never scored. Before, the user term was a zero-boost scored term and the filters a
// boolean Filter clause, which bleve applies only after scoring each candidate.
func (ix *Index) buildQuery(q Query) *shapedText {
	filters := []query.Query{term(fieldUserID, q.UserID)}
	if len(q.Types) > 0 {
		types := make([]query.Query, len(q.Types))
		for i, t := range q.Types {
			types[i] = term(fieldType, t)
		}
		filters = append(filters, query.NewDisjunctionQuery(types))
	}
	if q.AgentID != "" {
		filters = append(filters, term(fieldAgentID, q.AgentID))
	}
	if q.RunID != "" {
		filters = append(filters, term(fieldRunID, q.RunID))
	}
	for _, tag := range q.Tags {
		filters = append(filters, term(fieldTags, tag))
	}
	return &shapedText{user: q.UserID, text: q.Text, analyzer: ix.analyzer, opts: &ix.opts, filters: filters,
		dense: &ix.dense, users: ix.users, decoded: ix.decoded}
}

// term is a term query on a keyword field.
func term(field, val string) query.Query {
	t := query.NewTermQuery(val)
	t.SetField(field)
	return t
}
