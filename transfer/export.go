package transfer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/client"
)

// Reader is what an export needs of the API (client.Client has it).
type Reader interface {
	ClusterStatus(ctx context.Context) (apiv1.ClusterStatus, error)
	Users(ctx context.Context, cursor string, limit int) (apiv1.UsersResponse, error)
	List(ctx context.Context, user string, opts client.ListOptions) (apiv1.ListResponse, error)
	Records(ctx context.Context, user, kind, cursor string, limit int) (apiv1.RecordsResponse, error)
}

// ExportOptions says what to export. Exactly one of Users and AllUsers.
type ExportOptions struct {
	Users    []string
	AllUsers bool   // every user the token sees (GET /v1/users: an admin token)
	AgentID  string // only this agent's memories, and no user-level records
	Build    string // written in the header
	Addr     string // the node's address, written in the header
	PageSize int    // items a request asks for; default 500, at most apiv1.MaxListLimit
	// Progress, when set, is called after every page.
	Progress func(Progress)
}

func (o ExportOptions) validate() (ExportOptions, error) {
	switch {
	case len(o.Users) == 0 && !o.AllUsers:
		return o, errors.New("name a user, or every user")
	case len(o.Users) > 0 && o.AllUsers:
		return o, errors.New("name users or every user, not both")
	case o.PageSize < 0 || o.PageSize > apiv1.MaxListLimit:
		return o, fmt.Errorf("page size %d: want 1 to %d", o.PageSize, apiv1.MaxListLimit)
	}
	if o.PageSize == 0 {
		o.PageSize = 500
	}
	if o.Progress == nil {
		o.Progress = func(Progress) {}
	}
	return o, nil
}

type exporter struct {
	src  Reader
	opts ExportOptions
	enc  *json.Encoder
	sum  *Summary
}

// Export writes the header, then every selected user's memories and records, one JSON object a line.
func Export(ctx context.Context, src Reader, w io.Writer, opts ExportOptions) (*Summary, error) {
	start := time.Now()
	opts, err := opts.validate()
	if err != nil {
		return nil, err
	}
	e := &exporter{src: src, opts: opts, enc: json.NewEncoder(w), sum: newSummary()}
	e.enc.SetEscapeHTML(false)
	st, err := src.ClusterStatus(ctx)
	if err != nil {
		return nil, fmt.Errorf("cluster status: %w", err)
	}
	h := Header{Kind: KindHeader, Format: Format, Version: Version, Build: opts.Build, Time: start.UTC(),
		Source: Source{Addr: opts.Addr, NodeID: st.NodeID, Nodes: len(st.Nodes)}, Users: opts.Users,
		AllUsers: opts.AllUsers, AgentID: opts.AgentID}
	if err := e.enc.Encode(h); err != nil {
		return nil, err
	}
	err = e.users(ctx, e.user)
	e.sum.finish(start)
	return e.sum, err
}

// users calls fn for each selected user, paging through the cluster's users for AllUsers.
func (e *exporter) users(ctx context.Context, fn func(context.Context, string) error) error {
	if !e.opts.AllUsers {
		for _, u := range e.opts.Users {
			if err := fn(ctx, u); err != nil {
				return err
			}
		}
		return nil
	}
	cursor := ""
	for {
		page, err := e.src.Users(ctx, cursor, e.opts.PageSize)
		if err != nil {
			return fmt.Errorf("list users: %w", err)
		}
		for _, u := range page.Users {
			if err := fn(ctx, u); err != nil {
				return err
			}
		}
		if cursor = page.NextCursor; cursor == "" {
			return nil
		}
	}
}

func (e *exporter) user(ctx context.Context, user string) error {
	e.sum.Users++
	opts := client.ListOptions{AgentID: e.opts.AgentID, Limit: e.opts.PageSize}
	for {
		page, err := e.src.List(ctx, user, opts)
		if err != nil {
			return fmt.Errorf("list memories of %s: %w", user, err)
		}
		for i := range page.Memories {
			if err := e.write(Line{Kind: KindMemory, UserID: user, Memory: &page.Memories[i]}); err != nil {
				return err
			}
		}
		e.opts.Progress(Progress{Lines: e.sum.Lines, User: user})
		if opts.Cursor = page.NextCursor; opts.Cursor == "" {
			break
		}
	}
	if e.opts.AgentID != "" {
		return nil // facts, history, patterns and signals are the user's, not one agent's
	}
	for _, kind := range apiv1.RecordKinds {
		if err := e.records(ctx, user, kind); err != nil {
			return err
		}
	}
	return nil
}

func (e *exporter) records(ctx context.Context, user, kind string) error {
	cursor := ""
	for {
		page, err := e.src.Records(ctx, user, kind, cursor, e.opts.PageSize)
		if err != nil {
			return fmt.Errorf("list %s records of %s: %w", kind, user, err)
		}
		for _, r := range page.Records {
			if err := e.write(Line{Kind: kind, UserID: user, Key: r.Key, Value: r.Value, Items: r.Items}); err != nil {
				return err
			}
		}
		e.opts.Progress(Progress{Lines: e.sum.Lines, User: user})
		if page.NextCursor == cursor && cursor != "" {
			return fmt.Errorf("list %s records of %s: the node handed back the same cursor", kind, user)
		}
		if cursor = page.NextCursor; cursor == "" {
			return nil
		}
	}
}

func (e *exporter) write(l Line) error {
	if err := e.enc.Encode(l); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	e.sum.Lines++
	e.sum.add(l.Kind, func(c *Counts) { c.Exported++ })
	return nil
}
