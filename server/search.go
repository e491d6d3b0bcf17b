package server

import (
	"net/http"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/retrieval"
)

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request, c *decoded[apiv1.SearchRequest]) {
	req := c.body
	q, err := s.buildQuery(req, c.who.userPatterns())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	perShard, err := shardTimeout(req.ShardTimeout)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !s.embedQuery(w, r, &q) {
		return
	}
	k, reranked := q.K, s.rerankOn(q)
	if reranked {
		q.K = max(q.K, s.opts.RerankCandidates)
	}
	var res []retrieval.Result
	var failed []apiv1.ShardFailure
	if q.AllUsers {
		res, failed, err = s.c.SearchAll(r.Context(), q, req.Stale, perShard)
	} else if shard, ok := s.shard(w, r, q.UserID); !ok {
		return
	} else {
		res, err = s.c.Search(r.Context(), shard, q, req.Stale)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if reranked {
		res = s.rerank(r.Context(), q.Text, res, k)
	}
	out := apiv1.SearchResponse{Results: make([]apiv1.SearchResult, 0, len(res)), Partial: len(failed) > 0,
		MissingShards: failed}
	for _, h := range res {
		r := apiv1.SearchResult{Memory: h.Memory, Score: h.Score,
			VectorScore: h.VectorScore, TextScore: h.TextScore, Recency: h.Recency, Context: h.Context, Actor: h.Actor, RerankScore: h.Rerank}
		if p := h.Plan; p != nil {
			r.Plan = &apiv1.SearchPlan{Terms: p.Terms, Actors: p.Actors, TextQuery: p.TextQuery, Fusion: p.Fusion}
		}
		out.Results = append(out.Results, r)
	}
	writeJSON(w, http.StatusOK, out)
}

// embedQuery embeds the query text once, on the node that received it, when the vector side is weighted;
// it answers a failure itself.
func (s *Server) embedQuery(w http.ResponseWriter, r *http.Request, q *retrieval.Query) bool {
	if q.VectorWeight <= 0 {
		return true
	}
	vecs, err := s.emb.Embed(r.Context(), []string{q.Text})
	if err != nil {
		writeError(w, http.StatusBadGateway, "embedding_failed", err.Error(), "")
		return false
	}
	q.Vector, q.EmbedModel = vecs[0], s.emb.Fingerprint()
	return true
}

// buildQuery applies the reference defaults to a request and validates it. A query across users (no user_id)
// is limited to the caller's user patterns (nil: every user).
func (s *Server) buildQuery(req apiv1.SearchRequest, patterns []string) (retrieval.Query, error) {
	q := retrieval.NewQuery(req.UserID, req.Query)
	if q.AllUsers = req.UserID == ""; q.AllUsers {
		q.UserPatterns = patterns
	}
	q.AgentID, q.RunID, q.Tags, q.Now = req.AgentID, req.RunID, req.Tags, s.opts.Now().UTC()
	q.Mode = req.Mode
	if req.Now != nil {
		if req.Now.IsZero() {
			return q, memory.FieldError("now", "the zero time is not a time a question was asked")
		}
		q.Now = req.Now.UTC()
	}
	group, err := isGroup(req.SessionType)
	if err != nil {
		return q, err
	}
	q.SharedOnly, q.IncludeRetired = group, req.IncludeRetired
	if q.Mode == "" {
		q.Mode = retrieval.DefaultMode(q.AllUsers)
	}
	if req.K != 0 {
		q.K = req.K
	}
	if req.MinScore != nil {
		q.MinScore = *req.MinScore
	}
	if req.VectorWeight != nil {
		q.VectorWeight = *req.VectorWeight
	}
	if req.TextWeight != nil {
		q.TextWeight = *req.TextWeight
	}
	if req.CandidateMultiplier != 0 {
		q.CandidateMultiplier = req.CandidateMultiplier
	}
	for _, t := range req.Types {
		typ, err := memory.ParseType(t)
		if err != nil || t == "" {
			return q, memory.FieldError("types", "unknown type %q", t)
		}
		q.Types = append(q.Types, typ)
	}
	if req.From != nil {
		q.From = req.From.UTC()
	}
	if req.To != nil {
		q.To = req.To.UTC()
	}
	if req.RecencyHalfLife != "" {
		d, err := time.ParseDuration(req.RecencyHalfLife)
		if err != nil || d <= 0 {
			return q, memory.FieldError("recency_half_life", "not a positive Go duration: %q", req.RecencyHalfLife)
		}
		q.RecencyHalfLife = d
	}
	for _, t := range q.Tags {
		if t == "" {
			return q, memory.FieldError("tags", "empty tag")
		}
	}
	return q, q.Validate()
}

// shardTimeout parses a query across users' per-shard deadline ("": the cluster's default).
func shardTimeout(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > time.Minute {
		return 0, memory.FieldError("shard_timeout", "not a Go duration between 0 and 1m: %q", v)
	}
	return d, nil
}

// isGroup parses a session type: "" and "private" are the user's own session, "group" a shared one.
func isGroup(v string) (bool, error) {
	switch v {
	case "", apiv1.SessionPrivate:
		return false, nil
	case apiv1.SessionGroup:
		return true, nil
	}
	return false, memory.FieldError("session_type", "unknown session type %q (want private or group)", v)
}
