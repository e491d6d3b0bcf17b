package retrieval

import (
	"math"
	"slices"
	"sort"

	"github.com/memcluster/memcluster/fulltext"
	"github.com/memcluster/memcluster/vector"
)

// pipelineRun is one pipeline search between gathering candidates and ranking them.
type pipelineRun struct {
	s      *ShardIndex
	q      Query
	p      *PipelineParams
	plan   *Plan
	byID   map[string]*pcand
	useVec bool
}

type pcand struct {
	id                                   string
	vecRank, textRank                    int // 1-based; 0 when the side did not return it
	vec, text, fb, base, ctx, actor, rec float64
	ep                                   float64 // support from the rest of the episode
	when                                 float64 // the time factor
	score                                float64
	hasVec                               bool
}

func (r *pipelineRun) get(id string) *pcand {
	c, ok := r.byID[id]
	if !ok {
		c = &pcand{id: id, actor: 1, when: 1}
		r.byID[id] = c
	}
	return c
}

func (r *pipelineRun) addVector(hits []vector.Hit) {
	for i, h := range hits {
		c := r.get(h.ID)
		c.vecRank, c.vec, c.hasVec = i+1, float64(h.Score), true
	}
}

// addText records BM25 hits normalised to the best of them: the first query's, or the feedback query's.
func (r *pipelineRun) addText(hits []fulltext.Hit, feedback bool) {
	best := 0.0
	for _, h := range hits {
		best = math.Max(best, h.Score)
	}
	if best == 0 {
		return
	}
	for i, h := range hits {
		c := r.get(h.ID)
		if feedback {
			c.fb = h.Score / best
			continue
		}
		c.textRank, c.text = i+1, h.Score/best
	}
}

// rankedLocked fuses the two sides, normalises to the best candidate (so shares and boosts mean the same
// whatever the fusion), applies the actor factor and returns the candidates best first. The caller holds
// s.mu for reading.
func (r *pipelineRun) rankedLocked() []*pcand {
	s := r.s
	list := make([]*pcand, 0, len(r.byID))
	best := 0.0
	for _, c := range r.byID {
		if !c.hasVec && r.useVec {
			if v, ok := s.vec.Score(r.q.UserID, c.id, r.q.Vector); ok {
				c.vec = float64(v)
			}
			c.hasVec = true
		}
		c.base = r.fused(c)
		best = math.Max(best, c.base)
		list = append(list, c)
	}
	for _, c := range list {
		if best > 0 {
			c.base /= best
		}
		r.factorsLocked(c)
		c.score = c.base * c.actor * c.when
	}
	sortP(list)
	return list
}

// factorsLocked sets c's actor factor (from an actor the query names) and time factor (inside the query's
// time range).
func (r *pipelineRun) factorsLocked(c *pcand) {
	c.actor, c.when = 1, 1
	if tl := r.s.tl.users[r.q.UserID]; tl != nil && len(r.plan.Actors) > 0 {
		if e := tl.entries[c.id]; e != nil && e.actor != "" && slices.Contains(r.plan.Actors, e.actor) {
			c.actor = 1 + r.p.ActorBoost
		}
	}
	if tr := r.plan.Time; tr != nil {
		if a := r.s.attrs[c.id]; a != nil && tr.Contains(a.occurred) {
			c.when = 1 + r.p.TimeBoost
		}
	}
}

func (r *pipelineRun) fused(c *pcand) float64 {
	p := r.p
	if p.Fusion == "rrf" {
		v := 0.0
		if c.vecRank > 0 {
			v += p.VectorWeight / (p.RRFK + float64(c.vecRank))
		}
		if c.textRank > 0 {
			v += p.TextWeight / (p.RRFK + float64(c.textRank))
		}
		return v
	}
	return p.VectorWeight*math.Max(c.vec, 0) + p.TextWeight*(c.text+p.FeedbackWeight*c.fb)
}

// finish ranks the candidates, lets the strongest lend score to their episode neighbours, applies recency
// and the floor, and returns them best first.
func (r *pipelineRun) finish() []scored {
	s, q := r.s, r.q
	s.mu.RLock()
	defer s.mu.RUnlock()
	list := r.rankedLocked()
	list = append(list, r.neighboursLocked(list)...)
	r.episodeSupportLocked(list)
	out := make([]scored, 0, len(list))
	for _, c := range list {
		c.rec = s.recencyLocked(q, c.id)
		if r.p.ContextActor {
			c.score = (c.base + c.ctx + c.ep) * c.actor * c.when * c.rec
		} else {
			c.score = (c.base*c.actor*c.when + c.ctx) * c.rec
		}
		// The floor applies after calibration (pipeline_calibrate.go): these scores are relative.
		out = append(out, scored{id: c.id, score: c.score, vec: c.vec, text: c.text, rec: c.rec, ctx: c.ctx, actor: c.actor})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].id > out[j].id
	})
	return out
}

// neighboursLocked: a strong hit lends part of its score to the turns around it in its episode. A memory keeps
// the largest share it is lent; neighbours that were not candidates are returned to join (filters apply).
func (r *pipelineRun) neighboursLocked(list []*pcand) []*pcand {
	p, s := r.p, r.s
	tl := s.tl.users[r.q.UserID]
	if tl == nil || p.Spread <= 0 || p.Share <= 0 {
		return nil
	}
	gain := map[string]float64{}
	for _, c := range list[:min(p.Spread, len(list))] {
		for _, n := range tl.neighbours(c.id, p.Window, p.EpisodeGap) {
			share := p.Share
			if n.after && p.ReplyShare > 0 {
				share = p.ReplyShare
			}
			// With ContextActor the neighbour's own factors apply to its share, so it is lent from the
			// unfactored score (else a reply would outscore the hit it replies to).
			from := c.score
			if p.ContextActor {
				from = c.base
			}
			share *= from * math.Pow(p.Decay, float64(n.dist-1))
			gain[n.id] = math.Max(gain[n.id], share)
		}
	}
	var joined []*pcand
	for id, g := range gain {
		c, ok := r.byID[id]
		if !ok {
			if a := s.attrs[id]; a == nil || !a.match(&r.q) {
				continue
			}
			c = r.get(id)
			if r.useVec {
				if v, ok := s.vec.Score(r.q.UserID, id, r.q.Vector); ok {
					c.vec = float64(v)
				}
			}
			c.hasVec = true
			r.factorsLocked(c)
			joined = append(joined, c)
		}
		c.ctx = g
	}
	return joined
}

func sortP(list []*pcand) {
	sort.Slice(list, func(i, j int) bool {
		if list[i].score != list[j].score {
			return list[i].score > list[j].score
		}
		return list[i].id > list[j].id
	})
}
