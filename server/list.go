package server

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// The listing routes page with opaque cursors: the base64url of the last key a page examined, so a client
// can only hand back what a page gave it, and a key of any bytes survives a query string.

func encodeCursor(key string) string { return base64.RawURLEncoding.EncodeToString([]byte(key)) }

func decodeCursor(v string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return "", memory.FieldError("cursor", "not a cursor this API gave out")
	}
	return string(b), nil
}

// pageParams reads ?limit and ?cursor.
func pageParams(q url.Values) (limit int, after string, err error) {
	limit = apiv1.DefaultListLimit
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > apiv1.MaxListLimit {
			return 0, "", memory.FieldError("limit", "want 1 to %d, got %q", apiv1.MaxListLimit, v)
		}
	}
	after, err = decodeCursor(q.Get("cursor"))
	return limit, after, err
}

// listFilter reads the filters of GET /v1/users/{user_id}/memories.
func (s *Server) listFilter(q url.Values) (storage.ListFilter, error) {
	f := storage.ListFilter{AgentID: q.Get("agent_id"), RunID: q.Get("run_id"), Tags: q["tag"]}
	for _, v := range q["type"] {
		t, err := memory.ParseType(v)
		if err != nil || v == "" {
			return f, memory.FieldError("type", "unknown type %q (want working, episodic, semantic or perceptual)", v)
		}
		f.Types = append(f.Types, t)
	}
	for _, id := range []struct{ name, v string }{{"agent_id", f.AgentID}, {"run_id", f.RunID}} {
		if err := s.opts.Limits.ValidateID(id.name, id.v, false); err != nil {
			return f, err
		}
	}
	var err error
	if f.From, err = timeParam(q, "from"); err != nil {
		return f, err
	}
	f.To, err = timeParam(q, "to")
	return f, err
}

func timeParam(q url.Values, name string) (time.Time, error) {
	v := q.Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return t, memory.FieldError(name, "not an RFC 3339 time: %q", v)
	}
	return t.UTC(), nil
}

func (s *Server) handleListMemories(w http.ResponseWriter, r *http.Request, c *decoded[noFields]) {
	q := r.URL.Query()
	limit, after, err := pageParams(q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f, err := s.listFilter(q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	shard, ok := s.shard(w, r, c.user)
	if !ok {
		return
	}
	page, err := s.c.List(r.Context(), shard, c.user, after, limit, f, false)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	resp := apiv1.ListResponse{UserID: c.user, Memories: page.Memories}
	if page.Next != "" {
		resp.NextCursor = encodeCursor(page.Next)
	}
	writeJSON(w, http.StatusOK, resp)
}
