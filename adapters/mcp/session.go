package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memcluster/memcluster/apiv1"
)

type sessionAppendIn struct {
	userArg
	RunID   string `json:"runId" jsonschema:"the conversation's id, the same for all its turns"`
	Role    string `json:"role,omitempty" jsonschema:"who spoke: user, assistant or tool (default user)"`
	Text    string `json:"text" jsonschema:"what was said"`
	TaskEnd bool   `json:"taskEnd,omitempty" jsonschema:"this turn completes a task; the next user turn starts a new episode"`
}

type sessionOut struct {
	Pending  int  `json:"pending"`
	Tokens   int  `json:"tokens"`
	FlushDue bool `json:"flushDue"`
}

func (t *tools) sessionAppend(ctx context.Context, req *sdk.CallToolRequest, in sessionAppendIn) (sessionOut, error) {
	c, user, err := t.call(req, in.UserID)
	if err != nil {
		return sessionOut{}, err
	}
	role := in.Role
	if role == "" {
		role = "user"
	}
	st, err := c.Append(ctx, user, in.RunID, apiv1.AppendRequest{
		Messages: []apiv1.Message{{Role: role, Text: in.Text, TaskEnd: in.TaskEnd}}})
	if err != nil {
		return sessionOut{}, err
	}
	return sessionOut{Pending: st.Pending, Tokens: st.Tokens, FlushDue: st.FlushDue}, nil
}

type sessionFlushIn struct {
	userArg
	RunID string `json:"runId" jsonschema:"the conversation to consolidate"`
}

type flushOut struct {
	Messages int       `json:"messages"`
	Episodes []string  `json:"episodes"`
	Facts    []factOut `json:"facts"`
}

func (t *tools) sessionFlush(ctx context.Context, req *sdk.CallToolRequest, in sessionFlushIn) (flushOut, error) {
	c, user, err := t.call(req, in.UserID)
	if err != nil {
		return flushOut{}, err
	}
	res, err := c.Flush(ctx, user, in.RunID)
	if err != nil {
		return flushOut{}, err
	}
	out := flushOut{Messages: res.Messages, Episodes: []string{}, Facts: toRememberOut(res).Facts}
	for _, e := range res.Episodes {
		out.Episodes = append(out.Episodes, e.Text)
	}
	return out, nil
}

type factsIn struct {
	userArg
	All bool `json:"all,omitempty" jsonschema:"include superseded and retracted facts too"`
}

type factsOut struct {
	Facts []factOut `json:"facts"`
}

func (t *tools) facts(ctx context.Context, req *sdk.CallToolRequest, in factsIn) (factsOut, error) {
	c, user, err := t.call(req, in.UserID)
	if err != nil {
		return factsOut{}, err
	}
	fs, err := c.Facts(ctx, user, in.All, zeroTime)
	if err != nil {
		return factsOut{}, err
	}
	out := factsOut{Facts: make([]factOut, len(fs))}
	for i, f := range fs {
		out.Facts[i] = toFactOut(f, "")
	}
	return out, nil
}
