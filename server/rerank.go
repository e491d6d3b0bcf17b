package server

import (
	"cmp"
	"context"
	"slices"

	"github.com/memcluster/memcluster/retrieval"
)

// Reranker scores texts against a query (llm.Reranker): one score per text, higher more relevant, or false
// when it could not, and the order stands.
type Reranker interface {
	Scores(ctx context.Context, query string, texts []string) ([]float64, bool)
}

// rerankOn says whether a query's results go through the reranker: the default mode for one user only, since
// a query across users is hybrid and fans out under per-shard deadlines a model call would eat into.
func (s *Server) rerankOn(q retrieval.Query) bool {
	return s.opts.Rerank != nil && q.Mode == retrieval.ModePipeline && !q.AllUsers
}

// rerank orders the best RerankCandidates results by the reranker's scores (equal scores keep the pipeline's
// order; the rest follow in it) and cuts to k. The query plan stays on the first result.
func (s *Server) rerank(ctx context.Context, query string, res []retrieval.Result, k int) []retrieval.Result {
	n := min(len(res), s.opts.RerankCandidates)
	if n > 1 {
		texts := make([]string, n)
		for i := range n {
			texts[i] = res[i].Memory.Text
		}
		if scores, ok := s.opts.Rerank.Scores(ctx, query, texts); ok {
			plan := res[0].Plan
			res[0].Plan = nil
			for i := range n {
				res[i].Rerank = &scores[i]
			}
			slices.SortStableFunc(res[:n], func(a, b retrieval.Result) int { return cmp.Compare(*b.Rerank, *a.Rerank) })
			res[0].Plan = plan
		}
	}
	return res[:min(len(res), k)]
}
