package mcp

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/client"
)

// Search defaults, as in OpenClaw's memory_search and the API's search.
const (
	defaultMaxResults = 6
	defaultMinScore   = 0.35
)

// addTools registers every tool. Each description is one line an LLM can act on; each handler is one call to
// the API through the caller's client, so an API refusal is the tool's error, with the API's message.
func addTools(s *sdk.Server, t *tools) {
	tool(s, "memory_search", "Search the user's long-term memory (or, with workspace, their synced MEMORY.md and memory/*.md files) by meaning and keywords; returns the best matches with scores.", t.search)
	tool(s, "memory_get", "Read one memory by its id, or lines of a workspace file by path, startLine and lines (from memory_search).", t.get)
	tool(s, "remember", "Store something the user said that is worth keeping (a preference, fact or plan), in their words.", t.remember)
	tool(s, "memory_update", "Correct one memory in place by its id: new text, tags or importance (when the user amends something).", t.update)
	tool(s, "forget", "Delete one memory by its id, when the user asks to forget it or it is wrong.", t.forget)
	tool(s, "context", "Get a packaged, token-budgeted context block (facts, episodes, working memory) relevant to a query, ready to put in a prompt.", t.context)
	tool(s, "session_append", "Record one turn of the current conversation (run) in the user's working memory.", t.sessionAppend)
	tool(s, "session_flush", "Consolidate the conversation's pending turns into episodes and facts now.", t.sessionFlush)
	tool(s, "facts", "List what is currently known about the user as facts, with confidence.", t.facts)
}

func tool[In, Out any](s *sdk.Server, name, desc string, h func(context.Context, *sdk.CallToolRequest, In) (Out, error)) {
	sdk.AddTool(s, &sdk.Tool{Name: name, Description: desc},
		func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, Out, error) {
			out, err := h(ctx, req, in)
			return nil, out, err
		})
}

// userArg is the user a call is for; every tool takes it.
type userArg struct {
	UserID string `json:"userId,omitempty" jsonschema:"the user whose memory this is; may be left out when the server has a default user"`
}

type searchIn struct {
	userArg
	Query      string   `json:"query" jsonschema:"what to look for, in natural language"`
	MaxResults int      `json:"maxResults,omitempty" jsonschema:"at most this many results (default 6, up to 1000)"`
	MinScore   *float64 `json:"minScore,omitempty" jsonschema:"drop results scoring below this, 0..1 (default 0.35)"`
	Types      []string `json:"types,omitempty" jsonschema:"only these kinds: working, episodic, semantic, perceptual"`
	From       string   `json:"from,omitempty" jsonschema:"only memories that happened at or after this RFC 3339 time"`
	To         string   `json:"to,omitempty" jsonschema:"only memories that happened before this RFC 3339 time"`
	workspaceArg
}

// workspaceArg selects the OpenClaw workspace forms of memory_search and memory_get.
type workspaceArg struct {
	Workspace bool   `json:"workspace,omitempty" jsonschema:"search the user's synced Markdown workspace; results carry path, startLine and endLine"`
	AgentID   string `json:"agentId,omitempty" jsonschema:"the agent whose workspace (default: the user's own)"`
	Group     bool   `json:"group,omitempty" jsonschema:"this is a group conversation: private memory (MEMORY.md, private memories) stays out"`
}

type searchOut struct {
	Results []memoryOut `json:"results"`
}

func (t *tools) search(ctx context.Context, req *sdk.CallToolRequest, in searchIn) (searchOut, error) {
	c, user, err := t.call(req, in.UserID)
	if err != nil {
		return searchOut{}, err
	}
	if in.Workspace {
		return t.searchWorkspace(ctx, c, user, in)
	}
	sr := apiv1.SearchRequest{UserID: user, Query: in.Query, K: in.MaxResults, MinScore: in.MinScore, Types: in.Types,
		AgentID: in.AgentID, SessionType: sessionType(in.Group)}
	if sr.K == 0 {
		sr.K = defaultMaxResults
	}
	if sr.MinScore == nil {
		ms := defaultMinScore
		sr.MinScore = &ms
	}
	if sr.From, err = optionalTime("from", in.From); err != nil {
		return searchOut{}, err
	}
	if sr.To, err = optionalTime("to", in.To); err != nil {
		return searchOut{}, err
	}
	resp, err := c.Search(ctx, sr)
	if err != nil {
		return searchOut{}, err
	}
	out := searchOut{Results: make([]memoryOut, len(resp.Results))}
	for i, r := range resp.Results {
		out.Results[i] = toMemoryOut(r.Memory)
		out.Results[i].Score = r.Score
	}
	return out, nil
}

// searchWorkspace is memory_search over the user's synced workspace files.
func (t *tools) searchWorkspace(ctx context.Context, c *client.Client, user string, in searchIn) (searchOut, error) {
	if len(in.Types) > 0 || in.From != "" || in.To != "" {
		return searchOut{}, fmt.Errorf("workspace: types, from and to apply to memories, not to workspace files")
	}
	resp, err := c.WorkspaceSearch(ctx, user, apiv1.WorkspaceSearchRequest{AgentID: in.AgentID, Query: in.Query,
		MaxResults: in.MaxResults, MinScore: in.MinScore, SessionType: sessionType(in.Group)})
	if err != nil {
		return searchOut{}, err
	}
	out := searchOut{Results: make([]memoryOut, len(resp.Results))}
	for i, h := range resp.Results {
		out.Results[i] = workspaceHitOut(h)
	}
	return out, nil
}

// getIn names what to read: a memory by id, or lines of a workspace file by path (OpenClaw's memory_get).
type getIn struct {
	userArg
	ID        string `json:"id,omitempty" jsonschema:"the memory's id"`
	Path      string `json:"path,omitempty" jsonschema:"instead of id: a workspace file, MEMORY.md or memory/NAME.md"`
	StartLine int    `json:"startLine,omitempty" jsonschema:"with path: the first line to read (default 1)"`
	Lines     int    `json:"lines,omitempty" jsonschema:"with path: how many lines (default: to the end of the file)"`
	AgentID   string `json:"agentId,omitempty" jsonschema:"with path: the agent whose workspace (default: the user's own)"`
	Group     bool   `json:"group,omitempty" jsonschema:"this is a group conversation: MEMORY.md is not readable"`
}

func (t *tools) get(ctx context.Context, req *sdk.CallToolRequest, in getIn) (memoryOut, error) {
	c, user, err := t.call(req, in.UserID)
	if err != nil {
		return memoryOut{}, err
	}
	switch {
	case in.ID != "" && in.Path != "":
		return memoryOut{}, fmt.Errorf("give id or path, not both")
	case in.Path != "":
		l, err := c.WorkspaceLines(ctx, user, apiv1.WorkspaceLinesRequest{AgentID: in.AgentID, RelPath: in.Path,
			StartLine: in.StartLine, Lines: in.Lines, SessionType: sessionType(in.Group)})
		if err != nil {
			return memoryOut{}, err
		}
		return workspaceLinesOut(l), nil
	case in.ID == "":
		return memoryOut{}, fmt.Errorf("id or path: one is required")
	}
	m, err := c.Get(ctx, user, in.ID, false)
	if err != nil {
		return memoryOut{}, err
	}
	return toMemoryOut(m), nil
}

type rememberIn struct {
	userArg
	Text string `json:"text" jsonschema:"what to remember, one or a few sentences"`
	Time string `json:"time,omitempty" jsonschema:"when it was said, RFC 3339 (default: now)"`
}

type rememberOut struct {
	Facts    []factOut `json:"facts"`
	Rejected []string  `json:"rejected,omitempty"`
}

func (t *tools) remember(ctx context.Context, req *sdk.CallToolRequest, in rememberIn) (rememberOut, error) {
	c, user, err := t.call(req, in.UserID)
	if err != nil {
		return rememberOut{}, err
	}
	at, err := optionalTime("time", in.Time)
	if err != nil {
		return rememberOut{}, err
	}
	res, err := c.Remember(ctx, user, in.Text, deref(at))
	if err != nil {
		return rememberOut{}, err
	}
	return toRememberOut(res), nil
}

type updateIn struct {
	userArg
	ID         string    `json:"id" jsonschema:"the id of the memory to change"`
	Text       *string   `json:"text,omitempty" jsonschema:"the corrected text"`
	Tags       *[]string `json:"tags,omitempty" jsonschema:"the new tags, replacing the old ones"`
	Importance *float64  `json:"importance,omitempty" jsonschema:"the new importance, 0..1"`
}

func (t *tools) update(ctx context.Context, req *sdk.CallToolRequest, in updateIn) (memoryOut, error) {
	c, user, err := t.call(req, in.UserID)
	if err != nil {
		return memoryOut{}, err
	}
	m, err := c.Update(ctx, user, in.ID, apiv1.UpdateRequest{Text: in.Text, Tags: in.Tags, Importance: in.Importance})
	if err != nil {
		return memoryOut{}, err
	}
	return toMemoryOut(m), nil
}

type forgetIn struct {
	userArg
	ID string `json:"id" jsonschema:"the id of the memory to delete"`
}

type forgetOut struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

func (t *tools) forget(ctx context.Context, req *sdk.CallToolRequest, in forgetIn) (forgetOut, error) {
	c, user, err := t.call(req, in.UserID)
	if err != nil {
		return forgetOut{}, err
	}
	if err := c.Delete(ctx, user, in.ID); err != nil {
		return forgetOut{}, err
	}
	return forgetOut{ID: in.ID, Deleted: true}, nil
}

type contextIn struct {
	userArg
	Query  string `json:"query" jsonschema:"the question or task the context is for"`
	Budget int    `json:"budget,omitempty" jsonschema:"token budget of the packaged context (default: the server's, 20..100000)"`
	RunID  string `json:"runId,omitempty" jsonschema:"the current conversation, whose working memory comes first"`
}

type contextOut struct {
	Text       string  `json:"text"`
	Tokens     int     `json:"tokens"`
	Confidence float64 `json:"confidence"`
	Uncertain  bool    `json:"uncertain"`
}

func (t *tools) context(ctx context.Context, req *sdk.CallToolRequest, in contextIn) (contextOut, error) {
	c, user, err := t.call(req, in.UserID)
	if err != nil {
		return contextOut{}, err
	}
	res, err := c.Context(ctx, user, apiv1.ContextRequest{Query: in.Query, Budget: in.Budget, RunID: in.RunID})
	if err != nil {
		return contextOut{}, err
	}
	return contextOut{Text: res.Text, Tokens: res.Tokens, Confidence: res.Confidence, Uncertain: res.Uncertain}, nil
}
