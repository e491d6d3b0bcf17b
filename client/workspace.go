package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/memcluster/memcluster/apiv1"
)

// The workspace methods index and read an OpenClaw Markdown workspace (MEMORY.md and memory/*.md) of user;
// agent "" is the user's own workspace, otherwise that agent's. Package workspace drives the writes; an agent
// tool layer needs only WorkspaceSearch (memory_search) and WorkspaceLines (memory_get).

// Workspace lists the files synced to the workspace and the node's embedder fingerprint.
func (c *Client) Workspace(ctx context.Context, user, agent string) (apiv1.WorkspaceState, error) {
	var out apiv1.WorkspaceState
	p, err := userPath(apiv1.PathWorkspace, user)
	if err == nil {
		err = c.do(ctx, "GET", p, agentQuery(agent), nil, &out)
	}
	return out, err
}

// PutWorkspaceFile sends one file's chunk list (texts only for chunks the server lacks).
func (c *Client) PutWorkspaceFile(ctx context.Context, user string, req apiv1.WorkspacePutRequest) (apiv1.WorkspacePutResponse, error) {
	var out apiv1.WorkspacePutResponse
	p, err := userPath(apiv1.PathWorkspaceFiles, user)
	if err == nil {
		err = c.do(ctx, "PUT", p, nil, req, &out)
	}
	return out, err
}

// DeleteWorkspaceFile removes a synced file and its chunk records.
func (c *Client) DeleteWorkspaceFile(ctx context.Context, user, agent, path string) (apiv1.WorkspaceDeleteResponse, error) {
	var out apiv1.WorkspaceDeleteResponse
	p, err := userPath(apiv1.PathWorkspaceFiles, user)
	if err == nil {
		q := agentQuery(agent)
		q.Set("path", path)
		err = c.do(ctx, "DELETE", p, q, nil, &out)
	}
	return out, err
}

// WorkspaceLines returns lines of a file as last synced, byte for byte (memory_get). A path outside
// MEMORY.md and memory/ is a 400 naming the problem.
func (c *Client) WorkspaceLines(ctx context.Context, user string, req apiv1.WorkspaceLinesRequest) (apiv1.WorkspaceLines, error) {
	var out apiv1.WorkspaceLines
	p, err := userPath(apiv1.PathWorkspaceLines, user)
	if err == nil {
		q := agentQuery(req.AgentID)
		q.Set("path", req.RelPath)
		if req.StartLine > 0 {
			q.Set("start_line", strconv.Itoa(req.StartLine))
		}
		if req.Lines > 0 {
			q.Set("lines", strconv.Itoa(req.Lines))
		}
		if req.SessionType != "" {
			q.Set("session_type", req.SessionType)
		}
		err = c.do(ctx, "GET", p, q, nil, &out)
	}
	return out, err
}

// WorkspaceSearch runs memory_search over the workspace: hits with path, line range, text (≤ 700
// characters), score, provider and model, best first.
func (c *Client) WorkspaceSearch(ctx context.Context, user string, req apiv1.WorkspaceSearchRequest) (apiv1.WorkspaceSearchResponse, error) {
	var out apiv1.WorkspaceSearchResponse
	p, err := userPath(apiv1.PathWorkspaceSearch, user)
	if err == nil {
		err = c.do(ctx, "POST", p, nil, req, &out)
	}
	return out, err
}

func agentQuery(agent string) url.Values {
	q := url.Values{}
	if agent != "" {
		q.Set("agent_id", agent)
	}
	return q
}
