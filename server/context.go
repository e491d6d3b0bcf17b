package server

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/consolidation"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/retrieval"
)

// contextRun is one context request going through the pipeline.
type contextRun struct {
	s      *Server
	ctx    context.Context
	shard  uint32
	user   string
	req    apiv1.ContextRequest
	group  bool
	now    time.Time
	plan   retrieval.QueryPlan
	ev     []retrieval.Evidence
	tiers  map[string]string // evidence id -> tier
	stages []apiv1.ContextStage
	// escalated: the archive was searched; coldHits are the archive entries it read.
	escalated bool
	coldHits  []string
	// unread are archive entries whose segments could not be read (an external store down): the answer goes
	// on without them and names them in left_out.
	unread []apiv1.LeftOut
}

func (s *Server) handleContext(w http.ResponseWriter, r *http.Request, c *decoded[apiv1.ContextRequest]) {
	user, req := c.user, c.body
	cr, err := s.newContextRun(r.Context(), user, req)
	if err == nil {
		s.nameLeader(w, cr.shard)
		err = cr.retrieve()
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, cr.respond())
	go s.noteColdReads(user, cr.coldHits)
}

func (s *Server) newContextRun(ctx context.Context, user string, req apiv1.ContextRequest) (*contextRun, error) {
	if err := s.opts.Limits.ValidateText("query", req.Query); err != nil {
		return nil, err
	}
	if err := s.opts.Limits.ValidateID("run_id", req.RunID, false); err != nil {
		return nil, err
	}
	if req.Budget == 0 {
		req.Budget = apiv1.DefaultContextBudget
	}
	if req.Budget < 20 || req.Budget > 100000 {
		return nil, memory.FieldError("budget", "want 20..100000 tokens, got %d", req.Budget)
	}
	group, err := isGroup(req.SessionType)
	if err != nil {
		return nil, err
	}
	if req.Mode == "" {
		req.Mode = retrieval.DefaultMode(false)
	}
	if req.Mode != retrieval.ModePipeline && req.Mode != retrieval.ModeHybrid {
		return nil, memory.FieldError("mode", "unknown search mode %q (want pipeline or hybrid)", req.Mode)
	}
	shard, err := s.c.ShardFor(ctx, user)
	if err != nil {
		return nil, err
	}
	cr := &contextRun{s: s, ctx: ctx, shard: shard, user: user, req: req, group: group, now: s.opts.Now().UTC(),
		tiers: map[string]string{}}
	if req.Now != nil {
		cr.now = req.Now.UTC()
	}
	return cr, nil
}

// retrieve plans, reads each memory type in the plan's order, judges the evidence, and escalates to the
// archive when it is not good enough.
func (cr *contextRun) retrieve() error {
	facts, err := cr.s.readFacts(cr.ctx, cr.shard, &userTxn{user: cr.user})
	if err != nil {
		return err
	}
	facts = consolidation.CurrentFacts(facts)
	cr.plan = retrieval.PlanQuery(cr.req.Query, cr.now, entitySet(facts))
	if cr.req.RunID != "" {
		cr.plan = cr.plan.WithRun(cr.req.RunID)
	}
	cr.stage("plan", cr.plan)
	for _, t := range cr.plan.Memories {
		n := len(cr.ev)
		var err error
		switch t {
		case memory.Working:
			err = cr.working()
		case memory.Semantic:
			cr.semantic(facts)
		case memory.Perceptual:
			// Raw perceptual memories, and the episodes the perceptual path made of anomalies.
			if err = cr.search(t, false); err == nil {
				err = cr.searchTagged(t, memory.Episodic, "perceptual")
			}
		default:
			err = cr.search(t, false)
		}
		if err != nil {
			return err
		}
		cr.stage(string(t), map[string]int{"evidence": len(cr.ev) - n})
	}
	conf := retrieval.Assess(cr.plan, cr.ev)
	cr.stage("confidence", conf)
	if conf.Escalate {
		if err := cr.escalate(); err != nil {
			return err
		}
	}
	return nil
}

func (cr *contextRun) stage(name string, detail any) {
	if cr.req.Explain {
		cr.stages = append(cr.stages, apiv1.ContextStage{Stage: name, Detail: detail})
	}
}

// entitySet is the user's known entities: the subjects and objects of current facts.
func entitySet(facts []consolidation.Fact) retrieval.EntitySet {
	set := retrieval.EntitySet{}
	for _, f := range facts {
		for _, e := range []string{f.Subject, f.Object} {
			if e != "" && e != consolidation.SubjectUser {
				set[strings.ToLower(strings.Join(strings.Fields(e), " "))] = true
			}
		}
	}
	return set
}

// working adds the session's recent turns, scored by their lexical closeness to the query (the window is
// the live conversation: the newest turns get a floor so the packager keeps some of them).
func (cr *contextRun) working() error {
	rec, found, err := cr.s.readSession(cr.ctx, cr.shard, &userTxn{user: cr.user}, cr.req.RunID)
	if err != nil || !found || cr.group {
		return err
	}
	msgs := rec.Session.Messages
	for i, m := range msgs {
		recency := 0.3 * float64(i+1) / float64(len(msgs))
		score := max(consolidation.LexicalSimilarity(cr.req.Query, m.Content), recency)
		cr.add(retrieval.Evidence{ID: m.ID, Type: memory.Working, Text: string(m.Role) + ": " + m.Content,
			Time: m.Time, Score: score}, "hot")
	}
	if rec.Session.Summary != "" {
		cr.add(retrieval.Evidence{ID: "summary:" + cr.req.RunID, Type: memory.Working, Text: "summary: " + rec.Session.Summary,
			Time: rec.Session.LastActive, Score: 0.35}, "hot")
	}
	return nil
}

// semantic adds current facts: the subgraph around the plan's entities, or every fact the query's words touch.
func (cr *contextRun) semantic(facts []consolidation.Fact) {
	if cr.group {
		return // facts are private to the user
	}
	inGraph := map[string]bool{}
	if len(cr.plan.Entities) > 0 {
		if sub, err := consolidation.BuildGraph(facts).Traverse(cr.plan.Entities, 2, 100); err == nil {
			for _, e := range sub.Edges {
				inGraph[e.FactID] = true
			}
		}
	}
	for _, f := range facts {
		rel := consolidation.LexicalSimilarity(cr.req.Query, f.Statement)
		if inGraph[f.ID] {
			rel = max(rel, 0.6)
		}
		if rel < 0.1 {
			continue
		}
		cr.add(retrieval.Evidence{ID: f.ID, Type: memory.Semantic, Text: f.Statement, Time: f.ValidFrom,
			Score: rel, Confidence: f.Confidence, FactStatus: "current", Subject: f.Subject, Predicate: f.Predicate,
			Object: f.Object}, "hot")
	}
}

// search adds the search's hits of one memory type within the plan's time range (archive: the archive
// index instead of hot memories).
func (cr *contextRun) search(t memory.Type, archive bool) error {
	return cr.searchQ(t, t, "", archive)
}

// searchTagged adds hits of memory type stored carrying tag, as evidence of kind t.
func (cr *contextRun) searchTagged(t, stored memory.Type, tag string) error {
	return cr.searchQ(t, stored, tag, false)
}

func (cr *contextRun) searchQ(t, stored memory.Type, tag string, archive bool) error {
	q := retrieval.NewQuery(cr.user, cr.req.Query)
	q.Types, q.Now, q.SharedOnly, q.Archive, q.K, q.MinScore = []memory.Type{stored}, cr.now, cr.group, archive, 10, 0.2
	// Hot memories are read in the request's mode; archive entries (a month's summary each, no episodes)
	// by the hybrid fusion.
	if !archive {
		q.Mode = cr.req.Mode
	}
	if tag != "" {
		q.Tags = []string{tag}
	}
	// A question that is only a time ("what did I do last week?") is answered by that period's memories,
	// whatever their words: the range is the filter and every memory in it is relevant.
	onlyTime := cr.plan.Time != nil && len(cr.plan.Terms) == 0
	// An archive entry is dated by its month's start: the range is applied to the items it rehydrates instead.
	if tr := cr.plan.Time; tr != nil && !archive {
		q.From, q.To = tr.From.UTC(), tr.To.UTC()
	}
	if onlyTime {
		q.MinScore, q.K = 0, 20
	}
	if q.VectorWeight > 0 {
		vecs, err := cr.s.emb.Embed(cr.ctx, []string{q.Text})
		if err != nil {
			return err
		}
		q.Vector, q.EmbedModel = vecs[0], cr.s.emb.Fingerprint()
	}
	hits, err := cr.s.c.Search(cr.ctx, cr.shard, q, false)
	if err != nil {
		return err
	}
	for _, h := range hits {
		if archive {
			if err := cr.rehydrate(h.Memory, h.Score); err != nil {
				cr.s.log.Warn("context: archive entry unreadable", "user_id", cr.user, "entry", h.Memory.ID, "err", err)
				cr.unread = append(cr.unread, apiv1.LeftOut{ID: h.Memory.ID, Reason: "archive segment unreadable: " + err.Error()})
			}
			continue
		}
		tier := "hot"
		m, score := h.Memory, h.Score
		if onlyTime {
			score = max(score, 0.5)
		}
		cr.add(retrieval.Evidence{ID: m.ID, Type: t, Text: m.Text, Time: m.OccurredAt, Score: score,
			Entities: m.Entities}, tier)
	}
	return nil
}

func (cr *contextRun) add(e retrieval.Evidence, tier string) {
	if _, dup := cr.tiers[e.ID]; dup {
		return
	}
	e.Tier = tier
	cr.tiers[e.ID] = tier
	cr.ev = append(cr.ev, e)
}

// escalate searches the archive index of every type the plan reads; the cold items found are rehydrated by
// the tiering layer when it is present (see escalateCold), and the evidence is judged again.
func (cr *contextRun) escalate() error {
	n := len(cr.ev)
	for _, t := range cr.plan.Memories {
		if t == memory.Working || t == memory.Semantic {
			continue
		}
		if err := cr.search(t, true); err != nil {
			return err
		}
	}
	cr.escalated = true
	conf := retrieval.Assess(cr.plan, cr.ev)
	cr.stage("escalate", map[string]any{"archive_hits": len(cr.ev) - n, "confidence": conf})
	return nil
}

// respond judges the final evidence and packages it to the budget.
func (cr *contextRun) respond() apiv1.ContextResponse {
	conf := retrieval.Assess(cr.plan, cr.ev)
	pk := retrieval.Package(cr.plan, cr.ev, cr.req.Budget, nil)
	cr.stage("package", map[string]any{"tokens": pk.Tokens, "left_out": len(pk.LeftOut)})
	times := make(map[string]time.Time, len(cr.ev))
	for _, e := range cr.ev {
		times[e.ID] = e.Time
	}
	out := apiv1.ContextResponse{UserID: cr.user, Blocks: []apiv1.ContextBlock{}, Text: pk.String(), Tokens: pk.Tokens,
		Budget: pk.Budget, Confidence: conf.Score, Escalated: cr.escalated, Uncertain: conf.Escalate}
	for _, b := range pk.Blocks {
		ob := apiv1.ContextBlock{Kind: string(b.Type), Title: b.Title, Items: make([]apiv1.ContextItem, 0, len(b.Items))}
		for _, it := range b.Items {
			ci := apiv1.ContextItem{ID: it.ID, Text: it.Text, Score: it.Score, Tier: cr.tiers[it.ID], Cue: it.Cue,
				Truncated: it.Truncated}
			if t := times[it.ID]; !t.IsZero() {
				ci.Time = &t
			}
			ob.Items = append(ob.Items, ci)
		}
		out.Blocks = append(out.Blocks, ob)
	}
	for _, l := range pk.LeftOut {
		out.LeftOut = append(out.LeftOut, apiv1.LeftOut{ID: l.ID, Reason: l.Reason})
	}
	out.LeftOut = append(out.LeftOut, cr.unread...)
	if cr.req.Explain {
		out.Plan, out.Stages = cr.plan, cr.stages
	}
	return out
}
