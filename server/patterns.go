package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/consolidation"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// maxPatternEpisodes bounds the episodes one pattern run clusters (clustering is quadratic).
const maxPatternEpisodes = 500

// handleConsolidate runs pattern consolidation (episodic → semantic) for one user now.
func (s *Server) handleConsolidate(w http.ResponseWriter, r *http.Request, c *decoded[noFields]) {
	user := c.user
	var res apiv1.ConsolidateResponse
	done := s.transact(w, r, user, readsMemories, func(ctx context.Context, shard uint32, t *userTxn) error {
		facts, err := s.readFacts(ctx, shard, t)
		if err != nil {
			return err
		}
		ps, ds, n, err := s.runPatterns(ctx, shard, t, facts, nil, "consolidate")
		res = apiv1.ConsolidateResponse{UserID: user, Episodes: n, Facts: ds, Patterns: apiPatterns(ps)}
		return err
	})
	if done {
		s.countDecisions("consolidate", res.Facts)
		writeJSON(w, http.StatusOK, res)
	}
}

// handleCorrect records a user correction of a pattern: lowered, demoted (its fact retracted) or retracted.
func (s *Server) handleCorrect(w http.ResponseWriter, r *http.Request, c *decoded[apiv1.CorrectRequest]) {
	user, req := c.user, c.body
	var res apiv1.ConsolidateResponse
	done := s.transact(w, r, user, readsMemories, func(ctx context.Context, shard uint32, t *userTxn) error {
		prev, err := s.readPatterns(ctx, shard, t)
		if err != nil {
			return err
		}
		facts, err := s.readFacts(ctx, shard, t)
		if err != nil {
			return err
		}
		for i, p := range prev {
			if p.Key != req.Key {
				continue
			}
			np, cand, err := consolidation.CorrectPattern(p, t.now, s.opts.Model.Patterns)
			if err != nil {
				return err
			}
			prev[i] = np
			var cands []consolidation.Candidate
			if cand != nil {
				cands = append(cands, *cand)
			}
			res = apiv1.ConsolidateResponse{UserID: user, Patterns: apiPatterns([]consolidation.Pattern{np})}
			res.Facts, err = s.decidePatterns(t, []consolidation.Pattern{np}, cands, facts, "correction")
			return err
		}
		return fmt.Errorf("%w: pattern %q", memory.ErrNotFound, req.Key)
	})
	if done {
		writeJSON(w, http.StatusOK, res)
	}
}

// runPatterns is one pattern-consolidation step: the user's recent episodes (and fresh ones not committed yet)
// are clustered with the stored patterns, and each pattern promoted by it has its fact decided. It returns the
// patterns, the decisions and how many episodes were considered.
func (s *Server) runPatterns(ctx context.Context, shard uint32, t *userTxn, facts []consolidation.Fact,
	fresh []memory.Memory, trigger string) ([]consolidation.Pattern, []apiv1.FactDecision, int, error) {
	prev, err := s.readPatterns(ctx, shard, t)
	if err != nil {
		return nil, nil, 0, err
	}
	recent, err := s.c.Recent(ctx, shard, t.user, []memory.Type{memory.Episodic}, maxPatternEpisodes, false)
	if err != nil {
		return nil, nil, 0, err
	}
	eps := episodesOf(append(append([]memory.Memory(nil), fresh...), recent...))
	ps, cands, err := consolidation.DetectPatterns(prev, eps, nil, t.now, s.opts.Model.Patterns)
	if err != nil {
		return nil, nil, 0, err
	}
	ds, err := s.decidePatterns(t, ps, cands, facts, trigger)
	return ps, ds, len(eps), err
}

// decidePatterns stores the patterns and decides each promoted (or demoted) pattern's fact.
func (s *Server) decidePatterns(t *userTxn, ps []consolidation.Pattern, cands []consolidation.Candidate,
	facts []consolidation.Fact, trigger string) ([]apiv1.FactDecision, error) {
	for _, p := range ps {
		if err := t.setSide(storage.SpacePatterns, p.Key, p); err != nil {
			return nil, err
		}
	}
	episodes := map[string][]string{}
	for _, p := range ps {
		episodes["pattern:"+p.Key] = p.Episodes
	}
	var ds []consolidation.Decision
	for _, c := range cands {
		d, err := consolidation.Decide(c, facts, t.now, s.ids.New, s.opts.Model.Facts)
		if err != nil {
			return nil, err
		}
		if d.New != nil { // a promoted pattern's fact cites the episodes it generalises
			d.New.Provenance = append(append([]string(nil), episodes[c.Source]...), d.New.Provenance...)
		}
		ds, facts = append(ds, d), consolidation.Apply(facts, d)
	}
	return t.applyDecisions(ds, trigger)
}

func (s *Server) readPatterns(ctx context.Context, shard uint32, t *userTxn) ([]consolidation.Pattern, error) {
	rd, err := s.c.ReadSide(ctx, shard, storage.SpacePatterns, t.user, "", 0, false)
	if err != nil {
		return nil, err
	}
	t.observe(rd.Rev)
	out := make([]consolidation.Pattern, 0, len(rd.Items))
	for _, kv := range rd.Items {
		var p consolidation.Pattern
		if err := json.Unmarshal(kv.Value, &p); err != nil {
			return nil, fmt.Errorf("decode pattern %s: %w", kv.Key, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func apiPatterns(ps []consolidation.Pattern) []apiv1.Pattern {
	out := make([]apiv1.Pattern, 0, len(ps))
	for _, p := range ps {
		out = append(out, apiv1.Pattern{Key: p.Key, Statement: p.Statement, Episodes: p.Episodes, Support: p.Support,
			Confidence: p.Confidence, Status: string(p.Status), FirstSeen: p.FirstSeen, LastSeen: p.LastSeen,
			UpdatedAt: p.UpdatedAt})
	}
	return out
}

// episodesOf turns episodic memories into the episodes pattern detection clusters (anomaly episodes included).
func episodesOf(ms []memory.Memory) []consolidation.Episode {
	eps := make([]consolidation.Episode, 0, len(ms))
	for _, m := range ms {
		eps = append(eps, consolidation.Episode{ID: m.ID, Start: m.OccurredAt, End: m.OccurredAt, Summary: m.Text,
			Entities: m.Entities, Tags: m.Tags, Importance: m.Importance})
	}
	return eps
}
