package fulltext

import (
	"context"

	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"
)

// keepQuery passes only the matches of q whose id keep accepts. The check runs per candidate (an id lookup
// each), after the bitmap filters and before ranking, so K hits are still the best K that pass it.
type keepQuery struct {
	q    query.Query
	keep func(id string) bool
}

func (k *keepQuery) Searcher(ctx context.Context, r index.IndexReader, m mapping.IndexMapping,
	o search.SearcherOptions) (search.Searcher, error) {
	s, err := k.q.Searcher(ctx, r, m, o)
	if err != nil {
		return nil, err
	}
	return searcher.NewFilteringSearcher(ctx, s, func(_ *search.SearchContext, d *search.DocumentMatch) bool {
		id, err := r.ExternalID(d.IndexInternalID)
		return err == nil && k.keep(id)
	}), nil
}
