package server

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/consolidation"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// applyDecisions turns consolidation decisions into the transaction's writes: the fact records, their
// searchable mirrors (semantic memories carrying the fact's status), and a history event per change.
func (t *userTxn) applyDecisions(ds []consolidation.Decision, trigger string) ([]apiv1.FactDecision, error) {
	out := make([]apiv1.FactDecision, 0, len(ds))
	for _, d := range ds {
		cause := trigger + ": " + d.Reason
		for _, f := range d.Changed {
			op := string(d.Op)
			if d.Op == consolidation.OpUpdate && f.ID != d.Target {
				op = "UPDATE"
			}
			if err := t.putFact(f, op, cause, trigger); err != nil {
				return nil, err
			}
		}
		if d.New != nil {
			if err := t.putFact(*d.New, "ADD", cause, trigger); err != nil {
				return nil, err
			}
		}
		fd := apiv1.FactDecision{Decision: string(d.Op), Target: d.Target, Reason: d.Reason}
		switch {
		case d.New != nil:
			fd.Fact = apiFact(*d.New)
		case len(d.Changed) > 0:
			fd.Fact = apiFact(d.Changed[0])
		}
		out = append(out, fd)
	}
	return out, nil
}

func (t *userTxn) putFact(f consolidation.Fact, op, cause, trigger string) error {
	if err := t.setSide(storage.SpaceFacts, f.ID, f); err != nil {
		return err
	}
	var before any
	if old, ok := t.facts[f.ID]; ok {
		before = apiFact(old)
	}
	t.facts[f.ID] = f
	t.puts = append(t.puts, factMemory(t.user, f, trigger))
	return t.history(f.ID, op, before, apiFact(f), cause)
}

// factMemory is the semantic memory that makes a fact searchable; superseded and retracted facts stay, marked,
// and searches leave them out unless asked.
func factMemory(user string, f consolidation.Fact, trigger string) memory.Memory {
	ents := []string{f.Object}
	if f.Subject != consolidation.SubjectUser {
		ents = append(ents, f.Subject)
	}
	return memory.Memory{ID: f.ID, UserID: user, Type: memory.Semantic, Text: f.Statement,
		OccurredAt: f.ValidFrom, CreatedAt: f.RecordedAt, Entities: ents, Importance: f.Confidence,
		Metadata: map[string]string{memory.MetaFactStatus: factStatus(f), memory.MetaSource: trigger,
			"subject": f.Subject, "predicate": f.Predicate, "object": f.Object}}
}

func factStatus(f consolidation.Fact) string {
	switch {
	case f.ValidTo.IsZero():
		return "current"
	case f.SupersededBy != "":
		return "superseded"
	}
	return "retracted"
}

func apiFact(f consolidation.Fact) *apiv1.Fact {
	out := &apiv1.Fact{ID: f.ID, Statement: f.Statement, Subject: f.Subject, Predicate: f.Predicate, Object: f.Object,
		Confidence: f.Confidence, Status: factStatus(f), ValidFrom: f.ValidFrom, RecordedAt: f.RecordedAt,
		SupersededBy: f.SupersededBy, Provenance: f.Provenance}
	if !f.ValidTo.IsZero() {
		vt := f.ValidTo
		out.ValidTo = &vt
	}
	if !f.EndedAt.IsZero() {
		et := f.EndedAt
		out.EndedAt = &et
	}
	if out.Provenance == nil {
		out.Provenance = []string{}
	}
	return out
}

// handleRemember is the explicit signal: the user (or agent) asks to remember something.
func (s *Server) handleRemember(w http.ResponseWriter, r *http.Request, c *decoded[apiv1.RememberRequest]) {
	user, req := c.user, c.body
	if err := s.opts.Limits.ValidateText("text", req.Text); err != nil {
		s.fail(w, r, err)
		return
	}
	var res apiv1.ConsolidationResult
	done := s.transact(w, r, user, readsSideOnly, func(ctx context.Context, shard uint32, t *userTxn) error {
		at := t.now
		if req.Time != nil {
			at = req.Time.UTC()
		}
		cands, rejs, err := consolidation.Remember(req.Text, "remember:"+s.ids.New(t.now), at)
		if err != nil {
			return memory.FieldError("text", "%v", err)
		}
		facts, err := s.readFacts(ctx, shard, t)
		if err != nil {
			return err
		}
		rep := consolidation.Report{Facts: facts}
		var ds []consolidation.Decision
		for _, c := range cands {
			d, err := consolidation.Decide(c, rep.Facts, t.now, s.ids.New, s.opts.Model.Facts)
			if err != nil {
				return err
			}
			ds, rep.Facts = append(ds, d), consolidation.Apply(rep.Facts, d)
		}
		res = apiv1.ConsolidationResult{UserID: user, Trigger: "remember", Episodes: []memory.Memory{},
			Rejected: rejected(rejs)}
		if err := keepTransient(t, &res, at); err != nil {
			return err
		}
		res.Facts, err = t.applyDecisions(ds, "remember")
		return err
	})
	if done {
		s.countDecisions("remember", res.Facts)
		writeJSON(w, http.StatusOK, res)
	}
}

// keepTransient stores each passing state an explicit remember named ("I'm hungry right now") as an episode
// at the request's time: asked to be remembered, it is part of what happened, not long-term knowledge.
func keepTransient(t *userTxn, res *apiv1.ConsolidationResult, at time.Time) error {
	for i, r := range res.Rejected {
		if r.Reason != consolidation.RejectTransient {
			continue
		}
		ep := consolidation.NoteEpisode(r.Sentence, at)
		ep.ID = t.ids.New(t.now)
		m := episodeMemory(t, "", "", ep, "remember")
		t.puts = append(t.puts, m)
		res.Episodes = append(res.Episodes, m)
		res.Rejected[i].Kept, res.Rejected[i].KeptID = "episode", m.ID
		if err := t.history(m.ID, "ADD", nil, map[string]any{"text": m.Text, "type": m.Type}, "remember: passing state"); err != nil {
			return err
		}
	}
	return nil
}

func rejected(rs []consolidation.Rejection) []apiv1.Rejected {
	out := make([]apiv1.Rejected, 0, len(rs))
	for _, r := range rs {
		out = append(out, apiv1.Rejected{Sentence: r.Sentence, Reason: r.Reason})
	}
	return out
}

// handleFacts lists facts: current ones, every one with all=true, or those believed at as_of.
func (s *Server) handleFacts(w http.ResponseWriter, r *http.Request, c *decoded[noFields]) {
	user := c.user
	all, ok := boolParam(w, r, "all")
	if !ok {
		return
	}
	var asOf time.Time
	if v := r.URL.Query().Get("as_of"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_argument", "as_of: not an RFC 3339 time: "+strconv.Quote(v), "as_of")
			return
		}
		asOf = t
	}
	shard, ok := s.shard(w, r, user)
	if !ok {
		return
	}
	facts, err := s.readFacts(r.Context(), shard, &userTxn{user: user})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	switch {
	case !asOf.IsZero():
		facts = consolidation.FactsAsOf(facts, asOf)
	case !all:
		facts = consolidation.CurrentFacts(facts)
	}
	out := apiv1.FactsResponse{UserID: user, Facts: make([]apiv1.Fact, 0, len(facts))}
	for _, f := range facts {
		out.Facts = append(out.Facts, *apiFact(f))
	}
	writeJSON(w, http.StatusOK, out)
}

// handleHistory lists the recorded changes of a user's memories, or of one memory.
func (s *Server) handleHistory(w http.ResponseWriter, r *http.Request, c *decoded[noFields]) {
	user := c.user
	id := r.URL.Query().Get("memory_id")
	if id != "" && !memory.ValidID(id) {
		writeError(w, http.StatusBadRequest, "invalid_argument", "memory_id: not a memory id: "+strconv.Quote(id), "memory_id")
		return
	}
	shard, ok := s.shard(w, r, user)
	if !ok {
		return
	}
	rd, err := s.c.ReadSide(r.Context(), shard, storage.SpaceHistory, user, "", 0, false)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := apiv1.HistoryResponse{UserID: user, Events: []apiv1.HistoryEvent{}}
	for _, kv := range rd.Items {
		var ev apiv1.HistoryEvent
		if err := json.Unmarshal(kv.Value, &ev); err != nil {
			s.fail(w, r, err)
			return
		}
		if id == "" || ev.MemoryID == id {
			ev.ID = kv.Key
			out.Events = append(out.Events, ev)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// handleGraph returns the bounded subgraph of current facts around a concept.
func (s *Server) handleGraph(w http.ResponseWriter, r *http.Request, c *decoded[noFields]) {
	user := c.user
	q := r.URL.Query()
	concept := q.Get("concept")
	if concept == "" {
		writeError(w, http.StatusBadRequest, "invalid_argument", "concept: required", "concept")
		return
	}
	depth := 2
	if v := q.Get("depth"); v != "" {
		d, err := strconv.Atoi(v)
		if err != nil || d < 0 || d > 5 {
			writeError(w, http.StatusBadRequest, "invalid_argument", "depth: want an integer 0..5", "depth")
			return
		}
		depth = d
	}
	shard, ok := s.shard(w, r, user)
	if !ok {
		return
	}
	facts, err := s.readFacts(r.Context(), shard, &userTxn{user: user})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	current := consolidation.CurrentFacts(facts)
	sub, err := consolidation.BuildGraph(current).Traverse([]string{concept}, depth, 200)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_argument", err.Error(), "concept")
		return
	}
	byID := map[string]consolidation.Fact{}
	for _, f := range current {
		byID[f.ID] = f
	}
	out := apiv1.GraphResponse{UserID: user, Nodes: []apiv1.GraphNode{}, Edges: []apiv1.GraphEdge{}}
	for _, n := range sub.Nodes {
		out.Nodes = append(out.Nodes, apiv1.GraphNode{ID: n.Label, Key: n.Key, Hops: n.Hops})
	}
	for _, e := range sub.Edges {
		out.Edges = append(out.Edges, apiv1.GraphEdge{From: e.From, To: e.To, Predicate: e.Predicate, FactID: e.FactID,
			Statement: byID[e.FactID].Statement, Confidence: e.Confidence})
	}
	sort.SliceStable(out.Nodes, func(i, j int) bool { return out.Nodes[i].Hops < out.Nodes[j].Hops })
	writeJSON(w, http.StatusOK, out)
}
