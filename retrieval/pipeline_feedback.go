package retrieval

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"

	"github.com/memcluster/memcluster/memory"
)

// feedback is pseudo-relevance feedback: the words the best first-pass candidates share are what the
// question's topic is called in this user's memories (a question says "camped", the turns "camping trip",
// "tent", "the beach"). They go to a second BM25 query whose scores join the fusion, weighted lower.
func (r *pipelineRun) feedback(ctx context.Context, cand int) error {
	s := r.s
	s.mu.RLock()
	top := r.rankedLocked()
	actorToks := map[string]bool{}
	if tl := s.tl.users[r.q.UserID]; tl != nil {
		for a := range tl.actors {
			for _, tok := range nameTokens(a) {
				actorToks[tok] = true
			}
		}
	}
	s.mu.RUnlock()
	weight := map[string]float64{}
	for _, c := range top[:min(r.p.FeedbackDocs, len(top))] {
		m, err := s.db.GetMemoryWithoutEmbedding(s.shard, r.q.UserID, c.id)
		if errors.Is(err, memory.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		for _, t := range queryTerms(m.Text) {
			if len(t) > 2 && !actorToks[t] && !slices.Contains(r.plan.Terms, t) {
				weight[t] += c.score
			}
		}
	}
	terms := topTerms(weight, r.p.FeedbackTerms)
	if len(terms) == 0 {
		return nil
	}
	r.plan.Expansion = terms
	hits, err := s.textSearch(ctx, &r.q, r.plan.TextQuery+" "+strings.Join(terms, " "), cand)
	if err != nil {
		return err
	}
	r.addText(hits, true)
	return nil
}

// topTerms returns the n terms of highest weight (ties by the term, for determinism).
func topTerms(weight map[string]float64, n int) []string {
	terms := make([]string, 0, len(weight))
	for t := range weight {
		terms = append(terms, t)
	}
	sort.Slice(terms, func(i, j int) bool {
		if weight[terms[i]] != weight[terms[j]] {
			return weight[terms[i]] > weight[terms[j]]
		}
		return terms[i] < terms[j]
	})
	return terms[:min(n, len(terms))]
}
