package retrieval

import (
	"context"
	"math"
	"sort"
	"time"

	"github.com/memcluster/memcluster/fulltext"
	"github.com/memcluster/memcluster/vector"
)

// PipelineParams are the settings of the pipeline mode. They were chosen on a training split of conversations
// and checked on held-out ones (DESIGN.md); DefaultPipelineParams is what the server uses.
type PipelineParams struct {
	MinCandidates  int     // each side fetches max(K × CandidateMultiplier, this)
	Fusion         string  // "rrf" or "linear"
	RRFK           float64 // rank constant of reciprocal-rank fusion
	TextWeight     float64 // weight of the BM25 side in the fusion
	VectorWeight   float64 // weight of the vector side
	DropActorTerms bool    // leave actor names out of the BM25 query (the actor factor stands in)
	ActorBoost     float64 // score × (1 + this) for memories of an actor the query names
	Spread         int     // top fused candidates that pass score to their neighbours
	Window         int     // neighbours on each side
	Share          float64 // fraction of a hit's score its nearest neighbour receives
	Decay          float64 // further neighbours receive Share × Decay^(distance-1)
	EpisodeGap     time.Duration
}

// DefaultPipelineParams are the pipeline's settings.
var DefaultPipelineParams = PipelineParams{
	MinCandidates: 100, Fusion: "linear", RRFK: 60, TextWeight: 0.8, VectorWeight: 0.2,
	DropActorTerms: false, ActorBoost: 0.4, Spread: 10, Window: 2, Share: 0.4, Decay: 0.5, EpisodeGap: time.Hour,
}

// pipelineParams is what searchPipeline runs with (tests and the tuning harness swap it).
var pipelineParams = DefaultPipelineParams

type pcand struct {
	id                               string
	vecRank, textRank                int // 1-based; 0 when the side did not return it
	vec, text, base, ctx, actor, rec float64
	score                            float64
	hasVec                           bool
}

// searchPipeline plans the query, gathers candidates from both sides, fuses them by rank, favours the memories
// of actors the query names, spreads score to each strong hit's neighbours in its episode, and returns the best K.
func (s *ShardIndex) searchPipeline(ctx context.Context, q Query) ([]Result, error) {
	p := pipelineParams
	s.mu.RLock()
	plan := s.planLocked(&q, &p)
	s.mu.RUnlock()

	cand := min(max(q.K*q.CandidateMultiplier, p.MinCandidates), MaxCandidates)
	useVec := p.VectorWeight > 0 && s.usesVectors(&q)
	vecHits, textHits, err := s.candidates(ctx, &q, plan.TextQuery, cand, useVec, p.TextWeight > 0 && q.TextWeight > 0)
	if err != nil {
		return nil, err
	}
	cands := s.fusePipeline(q, &p, &plan, vecHits, textHits, useVec)
	out, err := s.rank(q, cands)
	if err != nil {
		return nil, err
	}
	if len(out) > 0 {
		out[0].Plan = &plan
	}
	return out, nil
}

func (s *ShardIndex) fusePipeline(q Query, p *PipelineParams, plan *Plan, vecHits []vector.Hit, textHits []fulltext.Hit, useVec bool) []scored {
	byID := make(map[string]*pcand, len(vecHits)+len(textHits))
	get := func(id string) *pcand {
		c, ok := byID[id]
		if !ok {
			c = &pcand{id: id}
			byID[id] = c
		}
		return c
	}
	for i, h := range vecHits {
		c := get(h.ID)
		c.vecRank, c.vec, c.hasVec = i+1, float64(h.Score), true
	}
	bestText := 0.0
	for _, h := range textHits {
		bestText = math.Max(bestText, h.Score)
	}
	for i, h := range textHits {
		c := get(h.ID)
		c.textRank = i + 1
		if bestText > 0 {
			c.text = h.Score / bestText
		}
	}

	s.mu.RLock()
	defer s.mu.RUnlock()
	exactVec := func(c *pcand) {
		if !c.hasVec && useVec {
			if v, ok := s.vec.Score(q.UserID, c.id, q.Vector); ok {
				c.vec = float64(v)
			}
			c.hasVec = true
		}
	}
	tl := s.tl.users[q.UserID]
	actors := map[string]bool{}
	for _, a := range plan.Actors {
		actors[a] = true
	}
	list := make([]*pcand, 0, len(byID))
	for _, c := range byID {
		exactVec(c)
		switch p.Fusion {
		case "linear":
			c.base = p.VectorWeight*math.Max(c.vec, 0) + p.TextWeight*c.text
		default: // rrf
			if c.vecRank > 0 {
				c.base += p.VectorWeight / (p.RRFK + float64(c.vecRank))
			}
			if c.textRank > 0 {
				c.base += p.TextWeight / (p.RRFK + float64(c.textRank))
			}
		}
		list = append(list, c)
	}
	// Normalise to the best candidate, so shares and boosts mean the same whatever the fusion.
	best := 0.0
	for _, c := range list {
		best = math.Max(best, c.base)
	}
	for _, c := range list {
		if best > 0 {
			c.base /= best
		}
		c.actor = 1
		if tl != nil && len(actors) > 0 {
			if e := tl.entries[c.id]; e != nil && actors[e.actor] {
				c.actor = 1 + p.ActorBoost
			}
		}
		c.score = c.base * c.actor
	}
	sortP(list)

	// Episode neighbours: a strong hit lends part of its score to the turns around it.
	if tl != nil && p.Spread > 0 && p.Share > 0 {
		gain := map[string]float64{}
		for _, c := range list[:min(p.Spread, len(list))] {
			for d, ids := range tl.neighbours(c.id, p.Window, p.EpisodeGap) {
				share := c.score * p.Share * math.Pow(p.Decay, float64(d))
				for _, id := range ids {
					gain[id] = math.Max(gain[id], share)
				}
			}
		}
		for id, g := range gain {
			c, ok := byID[id]
			if !ok {
				if a := s.attrs[id]; a == nil || !a.match(&q) {
					continue
				}
				c = get(id)
				exactVec(c)
				c.actor = 1
				list = append(list, c)
			}
			c.ctx = g
		}
	}
	out := make([]scored, 0, len(list))
	for _, c := range list {
		c.rec = 1
		if a := s.attrs[c.id]; a != nil {
			c.rec = recency(q, a.occurred)
		}
		c.score = (c.base*c.actor + c.ctx) * c.rec
		if c.score >= q.MinScore {
			out = append(out, scored{id: c.id, score: c.score, vec: c.vec, text: c.text, rec: c.rec, ctx: c.ctx, actor: c.actor})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].id > out[j].id
	})
	return out
}

func sortP(list []*pcand) {
	sort.Slice(list, func(i, j int) bool {
		if list[i].score != list[j].score {
			return list[i].score > list[j].score
		}
		return list[i].id > list[j].id
	})
}
