package retrieval

import (
	"context"
	"time"
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
	ReplyShare     float64 // when > 0, the share of the memories after a hit (the replies to it) instead of Share
	ContextActor   bool    // the actor and time factors apply to a memory's neighbour share too
	TimeBoost      float64 // score × (1 + this) for memories inside the time range the query names
	KeepTimeTerms  bool    // leave the query's time expression in the BM25 query
	// Episode support: a memory gains EpisodeSupport × the sum of the EpisodeTop best base scores of the
	// other candidates in its episode, so a session that matches the query in several turns rises as a whole.
	EpisodeSupport float64
	EpisodeTop     int

	// Pseudo-relevance feedback: the FeedbackDocs best first-pass candidates lend their FeedbackTerms most
	// frequent content words to a second BM25 query, whose normalised score is added with FeedbackWeight.
	FeedbackDocs   int
	FeedbackTerms  int
	FeedbackWeight float64
}

// DefaultPipelineParams are the pipeline's settings.
var DefaultPipelineParams = PipelineParams{
	MinCandidates: 100, Fusion: "linear", RRFK: 60, TextWeight: 0.8, VectorWeight: 0.2,
	ActorBoost: 0.8, Spread: 10, Window: 2, Share: 0.4, ReplyShare: 0.6, Decay: 0.5, EpisodeGap: time.Hour,
	ContextActor: true, TimeBoost: 1.5, KeepTimeTerms: true, EpisodeSupport: 0.15, EpisodeTop: 3, FeedbackTerms: 5,
	FeedbackWeight: 0.3,
}

// pipelineParams is what searchPipeline runs with (tests and the tuning harness swap it).
var pipelineParams = DefaultPipelineParams

// searchPipeline plans the query, gathers candidates from both sides, fuses them, widens the text side with
// words of the first-pass best hits, favours the memories of actors the query names, spreads score to each
// strong hit's neighbours in its episode, and returns the best K.
func (s *ShardIndex) searchPipeline(ctx context.Context, q Query) ([]Result, error) {
	p := pipelineParams
	s.mu.RLock()
	plan := s.planLocked(&q, &p)
	s.mu.RUnlock()

	cand := min(max(q.K*q.CandidateMultiplier, p.MinCandidates), MaxCandidates)
	r := &pipelineRun{s: s, q: q, p: &p, plan: &plan, byID: map[string]*pcand{}}
	r.useVec = p.VectorWeight > 0 && s.usesVectors(&q)
	useText := p.TextWeight > 0 && q.TextWeight > 0
	vecHits, textHits, err := s.candidates(ctx, &q, plan.TextQuery, cand, r.useVec, useText)
	if err != nil {
		return nil, err
	}
	r.addVector(vecHits)
	r.addText(textHits, false)
	if useText && p.FeedbackDocs > 0 && p.FeedbackWeight > 0 {
		if err := r.feedback(ctx, cand); err != nil {
			return nil, err
		}
	}
	out, err := s.rank(q, r.finish())
	if err != nil {
		return nil, err
	}
	out = r.calibrate(out)
	if len(out) > 0 {
		out[0].Plan = &plan
	}
	return out, nil
}
