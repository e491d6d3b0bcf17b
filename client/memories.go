package client

import (
	"context"
	"net/url"
	"strings"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
)

// Put stores a memory and returns it as stored, with its id.
func (c *Client) Put(ctx context.Context, req apiv1.PutRequest) (memory.Memory, error) {
	var resp apiv1.PutResponse
	if err := c.doFor(ctx, req.UserID, "POST", apiv1.PathMemories, nil, req, &resp); err != nil {
		return memory.Memory{}, err
	}
	return resp.Memory, nil
}

// PutBatch stores up to apiv1.MaxBatch memories of one user atomically and returns them in request order.
func (c *Client) PutBatch(ctx context.Context, reqs []apiv1.PutRequest) ([]memory.Memory, error) {
	var resp apiv1.PutBatchResponse
	if err := c.doFor(ctx, batchUser(reqs), "POST", apiv1.PathMemoriesBatch, nil, apiv1.PutBatchRequest{Memories: reqs}, &resp); err != nil {
		return nil, err
	}
	return resp.Memories, nil
}

// routeUnlessStale is the user a read is routed by (WithLeaderRouting): none for a stale read, which the
// client's node answers from its own replica.
func routeUnlessStale(user string, stale bool) string {
	if stale {
		return ""
	}
	return user
}

// batchUser is the user of a batch put: every memory of a batch has its first's.
func batchUser(reqs []apiv1.PutRequest) string {
	if len(reqs) == 0 {
		return ""
	}
	return reqs[0].UserID
}

// Get returns one memory of userID. stale lets a follower answer from its own
// replica without asking the leader.
func (c *Client) Get(ctx context.Context, userID, id string, stale bool) (memory.Memory, error) {
	path, q, err := memoryPath(userID, id)
	if err != nil {
		return memory.Memory{}, err
	}
	if stale {
		q.Set("stale", "true")
	}
	var m memory.Memory
	if err := c.doFor(ctx, routeUnlessStale(userID, stale), "GET", path, q, nil, &m); err != nil {
		return memory.Memory{}, err
	}
	return m, nil
}

// Delete removes one memory of userID.
func (c *Client) Delete(ctx context.Context, userID, id string) error {
	path, q, err := memoryPath(userID, id)
	if err != nil {
		return err
	}
	return c.doFor(ctx, userID, "DELETE", path, q, nil, nil)
}

// Search runs a hybrid search; results come best first.
func (c *Client) Search(ctx context.Context, req apiv1.SearchRequest) (apiv1.SearchResponse, error) {
	var resp apiv1.SearchResponse
	if err := c.doFor(ctx, routeUnlessStale(req.UserID, req.Stale), "POST", apiv1.PathSearch, nil, req, &resp); err != nil {
		return apiv1.SearchResponse{}, err
	}
	return resp, nil
}

// memoryPath builds the escaped /v1/memories/{id} path and its user_id query.
// The id and user are checked here because an empty one would address a
// different route, and "." or ".." would be cleaned away by the server's mux.
func memoryPath(userID, id string) (string, url.Values, error) {
	if userID == "" {
		return "", nil, memory.FieldError("user_id", "required")
	}
	if id == "" || id == "." || id == ".." {
		return "", nil, memory.FieldError("id", "invalid id %q", id)
	}
	path := strings.Replace(apiv1.PathMemory, "{id}", url.PathEscape(id), 1)
	return path, url.Values{"user_id": {userID}}, nil
}

// Update changes a memory of userID in place (the fields req gives) and returns it as stored.
func (c *Client) Update(ctx context.Context, userID, id string, req apiv1.UpdateRequest) (memory.Memory, error) {
	path, q, err := memoryPath(userID, id)
	if err != nil {
		return memory.Memory{}, err
	}
	var m memory.Memory
	if err := c.doFor(ctx, userID, "PATCH", path, q, req, &m); err != nil {
		return memory.Memory{}, err
	}
	return m, nil
}
