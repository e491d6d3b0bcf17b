package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/consolidation"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// sessionRecord is a working session as stored in the user's side space, keyed by run id.
type sessionRecord struct {
	AgentID string                `json:"agent_id,omitempty"`
	Session consolidation.Session `json:"session"`
}

var errNoSession = fmt.Errorf("%w: no such session", memory.ErrNotFound)

// readSession reads the session of run; found is false when there is none.
func (s *Server) readSession(ctx context.Context, shard uint32, t *userTxn, run string) (rec sessionRecord, found bool, err error) {
	rd, err := s.c.ReadSide(ctx, shard, storage.SpaceSessions, t.user, run, 0, false)
	if err != nil {
		return rec, false, err
	}
	t.observe(rd.Rev)
	for _, kv := range rd.Items {
		if kv.Key == run {
			return rec, true, json.Unmarshal(kv.Value, &rec)
		}
	}
	return sessionRecord{Session: consolidation.Session{ID: run}}, false, nil
}

// runRef validates the {run_id} path segment.
func (s *Server) runRef(w http.ResponseWriter, r *http.Request) (run string, ok bool) {
	run = r.PathValue("run_id")
	if err := s.opts.Limits.ValidateID("run_id", run, true); err != nil {
		s.fail(w, r, err)
		return "", false
	}
	return run, true
}

func (s *Server) handleAppend(w http.ResponseWriter, r *http.Request, c *decoded[apiv1.AppendRequest]) {
	user, req := c.user, c.body
	run, ok := s.runRef(w, r)
	if !ok {
		return
	}
	if err := s.validateAppend(req); err != nil {
		s.fail(w, r, err)
		return
	}
	var state apiv1.SessionState
	done := s.transact(w, r, user, readsSideOnly, func(ctx context.Context, shard uint32, t *userTxn) error {
		rec, _, err := s.readSession(ctx, shard, t, run)
		if err != nil {
			return err
		}
		if req.AgentID != "" {
			rec.AgentID = req.AgentID
		}
		due := false
		for _, m := range req.Messages {
			msg := consolidation.Message{ID: s.ids.New(t.now), Role: consolidation.Role(m.Role), Content: m.Text,
				Time: t.now, TaskEnd: m.TaskEnd}
			if m.Time != nil {
				msg.Time = m.Time.UTC()
			}
			res, err := rec.Session.Append(msg, s.opts.Model.Working)
			if err != nil {
				return memory.FieldError("messages", "%v", err)
			}
			due = due || res.FlushDue
		}
		state = s.sessionState(user, run, rec.Session)
		state.FlushDue = due
		return t.setSide(storage.SpaceSessions, run, rec)
	})
	if done {
		writeJSON(w, http.StatusOK, state)
	}
}

func (s *Server) validateAppend(req apiv1.AppendRequest) error {
	if err := s.opts.Limits.ValidateID("agent_id", req.AgentID, false); err != nil {
		return err
	}
	if len(req.Messages) == 0 || len(req.Messages) > apiv1.MaxMessages {
		return memory.FieldError("messages", "give 1 to %d messages", apiv1.MaxMessages)
	}
	for i, m := range req.Messages {
		switch consolidation.Role(m.Role) {
		case consolidation.RoleUser, consolidation.RoleAssistant, consolidation.RoleTool:
		default:
			return memory.FieldError(fmt.Sprintf("messages[%d].role", i), "unknown role %q (want user, assistant or tool)", m.Role)
		}
		if err := s.opts.Limits.ValidateText(fmt.Sprintf("messages[%d].text", i), m.Text); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) sessionState(user, run string, sess consolidation.Session) apiv1.SessionState {
	st := apiv1.SessionState{UserID: user, RunID: run, Window: make([]apiv1.Message, 0, len(sess.Messages)),
		Summary: sess.Summary, Tokens: sess.Tokens(s.opts.Model.Working), LastActive: sess.LastActive,
		Pending: len(sess.Pending) + len(sess.Messages) - sess.Consolidated}
	for _, m := range sess.Messages {
		t := m.Time
		st.Window = append(st.Window, apiv1.Message{Role: string(m.Role), Text: m.Content, Time: &t, TaskEnd: m.TaskEnd})
	}
	return st
}

func (s *Server) handleSession(w http.ResponseWriter, r *http.Request, c *decoded[noFields]) {
	user := c.user
	run, ok := s.runRef(w, r)
	if !ok {
		return
	}
	shard, ok := s.shard(w, r, user)
	if !ok {
		return
	}
	rec, found, err := s.readSession(r.Context(), shard, &userTxn{user: user}, run)
	if err == nil && !found {
		err = errNoSession
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.sessionState(user, run, rec.Session))
}

func (s *Server) handleFlush(w http.ResponseWriter, r *http.Request, c *decoded[noFields]) {
	s.consolidateSession(w, r, c.user, "flush")
}

func (s *Server) handleEnd(w http.ResponseWriter, r *http.Request, c *decoded[noFields]) {
	s.consolidateSession(w, r, c.user, "end")
}

// consolidateSession is flush (keep the window) or end (drop the session): what is pending becomes episodes
// and fact decisions, committed with the session's new state in one transaction.
func (s *Server) consolidateSession(w http.ResponseWriter, r *http.Request, user, trigger string) {
	run, ok := s.runRef(w, r)
	if !ok {
		return
	}
	var res apiv1.ConsolidationResult
	reads := readsSideOnly // the session and the facts
	if trigger == "end" {
		reads = readsMemories // the patterns read the user's recent episodes too
	}
	done := s.transact(w, r, user, reads, func(ctx context.Context, shard uint32, t *userTxn) error {
		rec, found, err := s.readSession(ctx, shard, t, run)
		if err == nil && !found {
			err = errNoSession
		}
		if err != nil {
			return err
		}
		facts, err := s.readFacts(ctx, shard, t)
		if err != nil {
			return err
		}
		if res, facts, err = s.runSession(t, &rec, facts, trigger); err != nil || trigger != "end" {
			return err
		}
		return s.patternsAtEnd(ctx, shard, t, facts, &res)
	})
	if done {
		s.countDecisions(trigger, res.Facts)
		writeJSON(w, http.StatusOK, res)
	}
}

// runSession consolidates one session into t (also used by the idle sweeper with trigger "idle").
func (s *Server) runSession(t *userTxn, rec *sessionRecord, facts []consolidation.Fact, trigger string) (
	apiv1.ConsolidationResult, []consolidation.Fact, error) {
	run := rec.Session.ID
	c := s.consolidator()
	var rep consolidation.Report
	var err error
	if trigger == "flush" {
		rep, err = rec.Session.Flush(c, facts, t.now)
	} else {
		rep, err = rec.Session.End(c, facts, t.now)
	}
	if err != nil {
		if errors.Is(err, consolidation.ErrInvalidInput) {
			return apiv1.ConsolidationResult{}, nil, memory.FieldError("session", "%v", err)
		}
		return apiv1.ConsolidationResult{}, nil, err
	}
	res := apiv1.ConsolidationResult{UserID: t.user, RunID: run, Messages: rep.Messages, Trigger: trigger,
		Episodes: make([]memory.Memory, 0, len(rep.Episodes)), Rejected: rejected(rep.Rejections), Ended: rep.Ended}
	for _, ep := range rep.Episodes {
		m := episodeMemory(t, rec.AgentID, run, ep, trigger)
		t.puts = append(t.puts, m)
		res.Episodes = append(res.Episodes, m)
		if err := t.history(m.ID, "ADD", nil, map[string]any{"text": m.Text, "type": m.Type}, trigger+": episode"); err != nil {
			return res, nil, err
		}
	}
	if res.Facts, err = t.applyDecisions(rep.Decisions, trigger); err != nil {
		return res, nil, err
	}
	if rep.Ended {
		t.delSide(storage.SpaceSessions, run)
	} else if err := t.setSide(storage.SpaceSessions, run, rec); err != nil {
		return res, nil, err
	}
	return res, rep.Facts, nil
}

// episodeMemory is the episodic memory of one segmented event.
func episodeMemory(t *userTxn, agent, run string, ep consolidation.Episode, source string) memory.Memory {
	return memory.Memory{ID: ep.ID, UserID: t.user, AgentID: agent, RunID: run, Type: memory.Episodic,
		Text: ep.Summary, OccurredAt: ep.Start, CreatedAt: t.now, Tags: ep.Tags, Entities: ep.Entities,
		Importance: ep.Importance, Metadata: map[string]string{memory.MetaSource: source,
			"ended_at": ep.End.UTC().Format("2006-01-02T15:04:05Z07:00"), "boundary": ep.Boundary,
			"messages": fmt.Sprint(len(ep.Messages))}}
}

// patternsAtEnd runs pattern consolidation when a session ends (the repetition trigger): the user's recent
// episodes, this session's included, are clustered, and a habit seen often enough becomes a fact in the same
// transaction.
func (s *Server) patternsAtEnd(ctx context.Context, shard uint32, t *userTxn, facts []consolidation.Fact,
	res *apiv1.ConsolidationResult) error {
	_, ds, _, err := s.runPatterns(ctx, shard, t, facts, res.Episodes, "repetition")
	res.Facts = append(res.Facts, ds...)
	return err
}
