package retrieval

import (
	"context"
	"errors"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/memcluster/memcluster/fulltext"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/vector"
)

// Search runs the hybrid search of the reference design: each side fetches K × CandidateMultiplier candidates,
// BM25 scores are normalised by the best BM25 score among the candidates, and
// final = VectorWeight × cosine + TextWeight × text, times the recency factor when decay is on.
// The two sides run concurrently. Candidates are scored from memory (a text-only candidate gets its exact cosine
// from the vector index; recency comes from the in-memory attributes), and only the K best are read from Pebble.
func (s *ShardIndex) Search(ctx context.Context, q Query) ([]Result, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	if q.AllUsers {
		return s.searchAcross(ctx, q)
	}
	if q.Mode == ModePipeline {
		return s.searchPipeline(ctx, q)
	}
	cand := min(q.K*q.CandidateMultiplier, MaxCandidates)
	useVec := s.usesVectors(&q)
	vecHits, textHits, err := s.candidates(ctx, &q, q.Text, cand, useVec, q.TextWeight > 0)
	if err != nil {
		return nil, err
	}
	return s.rank(q, s.fuse(q, vecHits, textHits, useVec))
}

// usesVectors reports whether the vector side can answer q: weight on, and a query vector of this index's model.
func (s *ShardIndex) usesVectors(q *Query) bool {
	return q.VectorWeight > 0 && len(q.Vector) == s.vec.Dim() && (q.EmbedModel == "" || q.EmbedModel == s.model)
}

// candidates runs the vector side (in its own goroutine) and the BM25 side (for text) at once, each fetching
// cand candidates under q's filters.
func (s *ShardIndex) candidates(ctx context.Context, q *Query, text string, cand int, useVec, useText bool) (
	vecHits []vector.Hit, textHits []fulltext.Hit, err error) {
	var wg sync.WaitGroup
	if useVec {
		wg.Go(func() { vecHits = s.vec.Search(q.UserID, q.Vector, cand, s.filter(q)) })
	}
	if useText {
		textHits, err = s.textSearch(ctx, q, text, cand)
	}
	wg.Wait()
	return vecHits, textHits, err
}

// textSearch runs BM25 for text under q's filters. bleve does not index occurred_at (every replica would pay
// 16 numeric terms per memory, nearly half of its indexing cost: fulltext/DESIGN.md), so a time range is checked
// on each BM25 candidate against the in-memory attributes, before bleve ranks it.
func (s *ShardIndex) textSearch(ctx context.Context, q *Query, text string, cand int) ([]fulltext.Hit, error) {
	fq := fulltext.Query{UserID: q.UserID, Text: text, K: cand,
		Types: typeStrings(q.Types), AgentID: q.AgentID, RunID: q.RunID, Tags: q.Tags}
	if !q.From.IsZero() || !q.To.IsZero() {
		fq.Keep = s.filter(q)
	}
	hits, err := s.text.SearchContext(ctx, fq)
	if errors.Is(err, fulltext.ErrEmptyQuery) {
		err = nil
	}
	// bleve knows the plain filters but not scope or fact status: those are checked on every text hit, so
	// that a group session can never receive a private memory by way of BM25.
	if keep := s.filter(q); keep != nil && (q.SharedOnly || q.Archive || s.anyHidden.Load()) {
		hits = slices.DeleteFunc(hits, func(h fulltext.Hit) bool { return !keep(h.ID) })
	}
	return hits, err
}

// scored is a candidate before its record is read.
type scored struct {
	id                    string
	score, vec, text, rec float64
	ctx, actor            float64 // pipeline mode only
}

func (s *ShardIndex) fuse(q Query, vecHits []vector.Hit, textHits []fulltext.Hit, useVec bool) []scored {
	byID := make(map[string]*scored, len(vecHits)+len(textHits))
	get := func(id string) *scored {
		c, ok := byID[id]
		if !ok {
			c = &scored{id: id, vec: math.NaN()}
			byID[id] = c
		}
		return c
	}
	for _, h := range vecHits {
		get(h.ID).vec = float64(h.Score)
	}
	best := 0.0
	for _, h := range textHits {
		best = math.Max(best, h.Score)
	}
	for _, h := range textHits {
		if best > 0 {
			get(h.ID).text = h.Score / best
		}
	}
	out := make([]scored, 0, len(byID))
	s.mu.RLock()
	defer s.mu.RUnlock()
	for id, c := range byID {
		if math.IsNaN(c.vec) {
			c.vec = 0
			if useVec {
				if v, ok := s.vec.Score(q.UserID, id, q.Vector); ok {
					c.vec = float64(v)
				}
			}
		}
		c.rec = s.recencyLocked(q, id)
		c.score = (q.VectorWeight*math.Max(c.vec, 0) + q.TextWeight*c.text) * c.rec
		if c.score >= q.MinScore {
			out = append(out, *c)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].id > out[j].id // newer first on ties
	})
	return out
}

// rank reads the records of the best candidates, skipping any deleted since the indexes answered.
func (s *ShardIndex) rank(q Query, cands []scored) ([]Result, error) {
	out := make([]Result, 0, min(q.K, len(cands)))
	for _, c := range cands {
		if len(out) == q.K {
			break
		}
		m, err := s.db.GetMemoryWithoutEmbedding(s.shard, q.UserID, c.id)
		if errors.Is(err, memory.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, Result{Memory: m, Score: c.score, VectorScore: c.vec, TextScore: c.text, Recency: c.rec,
			Context: c.ctx, Actor: c.actor})
	}
	return out, nil
}

func (s *ShardIndex) filter(q *Query) func(string) bool {
	if len(q.Types) == 0 && q.AgentID == "" && q.RunID == "" && len(q.Tags) == 0 && q.From.IsZero() && q.To.IsZero() &&
		!q.SharedOnly && !q.Archive && !s.anyHidden.Load() {
		return nil
	}
	return func(id string) bool {
		s.mu.RLock()
		a := s.attrs[id]
		s.mu.RUnlock()
		return a != nil && a.match(q)
	}
}

// recencyLocked is id's recency factor for q: 0.5^(age/half-life) with age measured from q.Now, 1 for a memory
// not yet occurred or unknown. With decay off (the default) it is 1 without a look-up in the attribute map, whose
// entries, a million in a large shard, are mostly cold in the CPU's caches. s.mu is held.
func (s *ShardIndex) recencyLocked(q Query, id string) float64 {
	if q.RecencyHalfLife <= 0 || q.Now.IsZero() {
		return 1
	}
	a := s.attrs[id]
	if a == nil {
		return 1
	}
	age := q.Now.Sub(a.occurred)
	if age <= 0 {
		return 1
	}
	return math.Pow(0.5, float64(age)/float64(q.RecencyHalfLife))
}

func typeStrings(ts []memory.Type) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}
