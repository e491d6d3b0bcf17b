package mem0

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/client"
	"github.com/memcluster/memcluster/memory"
)

// call is one mem0 request: a /v1 client with the caller's credential.
type call struct {
	ctx context.Context
	cl  *client.Client
	key string
}

func (a *Adapter) newCall(r *http.Request) (*call, error) {
	cl, err := a.clientFor(r)
	if err != nil {
		return nil, err
	}
	return &call{ctx: r.Context(), cl: cl, key: apiKey(r)}, nil
}

// decode reads a JSON body into v, refusing unknown fields so nothing sent is silently dropped.
func decode(r *http.Request, v any) error {
	d := json.NewDecoder(r.Body)
	d.DisallowUnknownFields()
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		var ute *json.UnmarshalTypeError
		switch {
		case errors.As(err, &ute):
			return invalidf("%s: want %s", ute.Field, ute.Type)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return invalidf("%s: not a field memcluster's mem0 adapter takes", strings.TrimPrefix(err.Error(), "json: unknown field "))
		}
		return invalidf("body: %v", err)
	}
	return nil
}

// message is one conversation turn as mem0 sends it.
type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// addInput is an add on any surface.
type addInput struct {
	Messages               []message
	UserID, AgentID, RunID string
	AppID                  string
	Metadata               map[string]any
	Infer                  bool
	Timestamp              *time.Time
}

// addResult is one memory an add changed.
type addResult struct {
	ID     string `json:"id"`
	Memory string `json:"memory"`
	Event  string `json:"event"`
}

func (in addInput) validate() error {
	if in.UserID == "" {
		if in.AgentID != "" || in.RunID != "" || in.AppID != "" {
			return invalidf("user_id: required: memcluster keeps every memory under a user (agent_id, run_id and app_id alone are not enough)")
		}
		return invalidf("user_id: required (one of user_id, agent_id, run_id must be given, and memcluster needs user_id)")
	}
	if len(in.Messages) == 0 {
		return invalidf("messages: at least one message is required")
	}
	for i, m := range in.Messages {
		switch m.Role {
		case "user", "assistant", "system":
		default:
			return invalidf("messages[%d].role: %q (want user, assistant or system)", i, m.Role)
		}
		if strings.TrimSpace(m.Content) == "" {
			return invalidf("messages[%d].content: empty", i)
		}
	}
	return nil
}

// add stores the messages: infer=true consolidates them (facts with ADD/UPDATE/DELETE/NONE decisions, and the
// episodes they came from), infer=false stores each message as it is, all or none.
func (c *call) add(in addInput) ([]addResult, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	if !in.Infer {
		return c.put(in)
	}
	if len(in.Metadata) > 0 || in.AppID != "" {
		return nil, invalidf("metadata and app_id with infer=true: consolidated facts carry neither in memcluster; send infer=false to keep them")
	}
	return c.consolidate(in)
}

func (c *call) put(in addInput) ([]addResult, error) {
	reqs := make([]apiv1.PutRequest, len(in.Messages))
	for i, m := range in.Messages {
		meta, err := metadataIn(in.Metadata, in.AppID)
		if err != nil {
			return nil, err
		}
		if meta == nil {
			meta = map[string]string{}
		}
		meta["role"] = m.Role
		reqs[i] = apiv1.PutRequest{UserID: in.UserID, AgentID: in.AgentID, RunID: in.RunID, Text: m.Content,
			OccurredAt: in.Timestamp, Metadata: meta}
	}
	ms, err := c.cl.PutBatch(c.ctx, reqs)
	if err != nil {
		return nil, err
	}
	out := make([]addResult, len(ms))
	for i, m := range ms {
		out[i] = addResult{ID: memID(m.UserID, m.ID), Memory: m.Text, Event: "ADD"}
	}
	return out, nil
}

// consolidate appends the turns to a working session and flushes it. Without a run_id the session is the
// add's own and ends with it; with one, it stays (the caller's run goes on). System turns are instructions,
// not memories: they are not consolidated.
func (c *call) consolidate(in addInput) ([]addResult, error) {
	msgs := make([]apiv1.Message, 0, len(in.Messages))
	for _, m := range in.Messages {
		if m.Role != "system" {
			msgs = append(msgs, apiv1.Message{Role: m.Role, Text: m.Content, Time: in.Timestamp})
		}
	}
	if len(msgs) == 0 {
		return nil, invalidf("messages: only system messages: nothing to remember")
	}
	run := in.RunID
	if run == "" {
		run = "mem0-add-" + memory.NewIDSource().New(time.Now())
	}
	if _, err := c.cl.Append(c.ctx, in.UserID, run, apiv1.AppendRequest{AgentID: in.AgentID, Messages: msgs}); err != nil {
		return nil, err
	}
	var res apiv1.ConsolidationResult
	var err error
	if in.RunID == "" {
		res, err = c.cl.EndSession(c.ctx, in.UserID, run)
	} else {
		res, err = c.cl.Flush(c.ctx, in.UserID, run)
	}
	if err != nil {
		return nil, fmt.Errorf("consolidate: %w", err)
	}
	out := make([]addResult, 0, len(res.Facts)+len(res.Episodes))
	for _, f := range res.Facts {
		if f.Fact != nil {
			out = append(out, addResult{ID: memID(in.UserID, f.Fact.ID), Memory: f.Fact.Statement, Event: f.Decision})
		}
	}
	for _, e := range res.Episodes {
		out = append(out, addResult{ID: memID(e.UserID, e.ID), Memory: e.Text, Event: "ADD"})
	}
	return out, nil
}

// listAll stands in for a listing route: a search with a neutral query that keeps every score, up to 1000
// memories, newest first. GET /v1/users/{user_id}/memories replaces it once it exists.
// maxListAll bounds what one get_all gathers (mem0's client pages on top of it).
const maxListAll = 10000

// listAll is mem0's get_all: a user's memories through the paged listing (newest first); without a user (an
// agent's or a run's memories across users) a search over every user the token may see, capped at 1000.
func (c *call) listAll(w where) ([]memoryOut, error) {
	if w.user == "" {
		return c.searchAll(w)
	}
	opts := client.ListOptions{AgentID: w.agent, RunID: w.run, Tags: w.tags, Limit: 1000}
	if w.from != nil {
		opts.From = *w.from
	}
	if w.to != nil {
		opts.To = *w.to
	}
	var out []memoryOut
	for len(out) < maxListAll {
		page, err := c.cl.List(c.ctx, w.user, opts)
		if err != nil {
			return nil, err
		}
		for _, m := range page.Memories {
			out = append(out, toMem0(m))
		}
		if page.NextCursor == "" {
			break
		}
		opts.Cursor = page.NextCursor
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.After(out[j].CreatedAt) })
	return out, nil
}

func (c *call) searchAll(w where) ([]memoryOut, error) {
	zero := 0.0
	req := apiv1.SearchRequest{Query: "*", K: 1000, MinScore: &zero}
	w.apply(&req)
	resp, err := c.cl.Search(c.ctx, req)
	if err != nil {
		return nil, err
	}
	out := make([]memoryOut, len(resp.Results))
	for i, r := range resp.Results {
		out[i] = toMem0(r.Memory)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.After(out[j].CreatedAt) })
	return out, nil
}

// search runs a hybrid search narrowed by w.
func (c *call) search(query string, w where, k int, threshold *float64) ([]memoryOut, error) {
	if strings.TrimSpace(query) == "" {
		return nil, invalidf("query: empty")
	}
	req := apiv1.SearchRequest{Query: query, K: k, MinScore: threshold}
	w.apply(&req)
	resp, err := c.cl.Search(c.ctx, req)
	if err != nil {
		return nil, err
	}
	return searchHits(resp.Results), nil
}

func (c *call) get(mid string) (memory.Memory, error) {
	user, id, err := parseMemID(mid)
	if err != nil {
		return memory.Memory{}, err
	}
	return c.cl.Get(c.ctx, user, id, false)
}

// update replaces a memory's text (and metadata): memcluster has no update in place through /v1 yet, so the
// new text is stored as a new memory (same user, agent, run, tags) and the old one deleted; the answer names
// the new id. PATCH /v1/memories/{id} replaces this once it exists.
func (c *call) update(mid, text string, meta map[string]any) (memory.Memory, error) {
	old, err := c.get(mid)
	if err != nil {
		return memory.Memory{}, err
	}
	if old.Metadata[memory.MetaFactStatus] != "" {
		// Replacing a fact's searchable mirror would leave the fact itself (facts, graph, context) unchanged.
		return memory.Memory{}, invalidf("memory_id %s is a consolidated fact: it changes through new statements (an add with infer=true supersedes it), not by editing its text", mid)
	}
	// In place (PATCH): the id stays, the text is embedded again, and the history records an UPDATE.
	var req apiv1.UpdateRequest
	if text != "" {
		req.Text = &text
	}
	if meta != nil {
		md, err := metadataIn(meta, old.Metadata[metaAppID])
		if err != nil {
			return memory.Memory{}, err
		}
		req.Metadata = &md
	}
	if req.Text == nil && req.Metadata == nil {
		return old, nil
	}
	return c.cl.Update(c.ctx, old.UserID, old.ID, req)
}

func (c *call) delete(mid string) error {
	user, id, err := parseMemID(mid)
	if err != nil {
		return err
	}
	return c.cl.Delete(c.ctx, user, id)
}

// deleteAll forgets a user. memcluster forgets by user only: agent_id, run_id or app_id narrowing is refused.
func (c *call) deleteAll(user, agent, run, app string) (int, error) {
	if agent != "" || run != "" || app != "" {
		return 0, invalidf("delete all by agent_id, run_id or app_id cannot be expressed: memcluster forgets a whole user_id")
	}
	if user == "" {
		return 0, invalidf("user_id: required")
	}
	return c.cl.DeleteUser(c.ctx, user)
}
