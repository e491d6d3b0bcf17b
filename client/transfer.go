package client

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/memcluster/memcluster/apiv1"
)

// ListOptions are the filters and the page of List; the zero value lists every memory, first page.
type ListOptions struct {
	Types    []string
	AgentID  string
	RunID    string
	Tags     []string // a memory must carry every one
	From, To time.Time
	Limit    int    // 0: the server's default (apiv1.DefaultListLimit)
	Cursor   string // a previous page's NextCursor
}

func (o ListOptions) query() url.Values {
	q := url.Values{"type": o.Types, "tag": o.Tags}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("agent_id", o.AgentID)
	set("run_id", o.RunID)
	set("cursor", o.Cursor)
	if !o.From.IsZero() {
		q.Set("from", o.From.UTC().Format(time.RFC3339Nano))
	}
	if !o.To.IsZero() {
		q.Set("to", o.To.UTC().Format(time.RFC3339Nano))
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	return q
}

// List returns one page of a user's memories in id (creation) order; pass the answer's NextCursor back as
// opts.Cursor for the next page, until it is empty.
func (c *Client) List(ctx context.Context, user string, opts ListOptions) (apiv1.ListResponse, error) {
	var resp apiv1.ListResponse
	path, err := userPath(apiv1.PathUserMemories, user)
	if err == nil {
		err = c.do(ctx, "GET", path, opts.query(), nil, &resp)
	}
	return resp, err
}

// Records returns one page of a user's records of one kind (apiv1.RecordKinds).
func (c *Client) Records(ctx context.Context, user, kind, cursor string, limit int) (apiv1.RecordsResponse, error) {
	var resp apiv1.RecordsResponse
	path, err := userPath(apiv1.PathUserRecords, user, "{kind}", kind)
	if err == nil {
		err = c.do(ctx, "GET", path, pageQuery(cursor, limit), nil, &resp)
	}
	return resp, err
}

// Import writes memories (with their ids) and records of one user as they are, in one transaction; what
// is already stored unchanged is counted, not written.
func (c *Client) Import(ctx context.Context, user string, req apiv1.ImportRequest) (apiv1.ImportResponse, error) {
	var resp apiv1.ImportResponse
	path, err := userPath(apiv1.PathUserImport, user)
	if err == nil {
		err = c.do(ctx, "POST", path, nil, req, &resp)
	}
	return resp, err
}

// Users returns one page of the cluster's users (a token that sees every user).
func (c *Client) Users(ctx context.Context, cursor string, limit int) (apiv1.UsersResponse, error) {
	var resp apiv1.UsersResponse
	err := c.do(ctx, "GET", apiv1.PathUsers, pageQuery(cursor, limit), nil, &resp)
	return resp, err
}

func pageQuery(cursor string, limit int) url.Values {
	q := url.Values{}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return q
}
