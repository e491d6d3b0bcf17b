package server

import (
	"context"
	"net/http"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// noSideKey is a side-key prefix no key starts with: reading it returns only the user's revision.
const noSideKey = "-"

// handleUpdate changes a memory in place: one user transaction (storage.CmdUpdate) that replaces the record
// and records an UPDATE history event, guarded by the user's revision and by the memory still existing, so a
// concurrent update or delete makes it re-read instead of overwriting or resurrecting.
func (s *Server) handleUpdate(w http.ResponseWriter, r *http.Request, c *decoded[apiv1.UpdateRequest]) {
	id, ok := memoryID(w, r)
	if !ok {
		return
	}
	req := c.body
	if req.Text == nil && req.Tags == nil && req.Metadata == nil && req.Importance == nil {
		writeError(w, http.StatusBadRequest, "invalid_argument", "give at least one of text, tags, metadata, importance", "")
		return
	}
	var out memory.Memory
	done := s.transact(w, r, c.user, readsMemories, func(ctx context.Context, shard uint32, t *userTxn) error {
		rd, err := s.c.ReadSide(ctx, shard, storage.SpaceHistory, t.user, noSideKey, 1, false)
		if err != nil {
			return err
		}
		t.observe(rd.Rev)
		m, err := s.c.Get(ctx, shard, t.user, id, false)
		if err != nil {
			return err
		}
		before, after := applyUpdate(&m, req)
		if err := s.opts.Limits.Validate(&m); err != nil {
			return err
		}
		t.replace, t.puts = true, []memory.Memory{m}
		out = m
		return t.history(id, "UPDATE", before, after, "api: update")
	})
	if done {
		out.Embedding = nil
		writeJSON(w, http.StatusOK, out)
	}
}

// applyUpdate sets the fields req gives and returns their old and new values for the history event. A new
// text drops the embedding, so the transaction embeds it again.
func applyUpdate(m *memory.Memory, req apiv1.UpdateRequest) (before, after map[string]any) {
	before, after = map[string]any{}, map[string]any{}
	if req.Text != nil {
		before["text"], after["text"] = m.Text, *req.Text
		if *req.Text != m.Text {
			m.Text, m.Embedding, m.EmbedModel = *req.Text, nil, ""
		}
	}
	if req.Tags != nil {
		before["tags"], after["tags"] = m.Tags, *req.Tags
		m.Tags = *req.Tags
	}
	if req.Metadata != nil {
		before["metadata"], after["metadata"] = m.Metadata, *req.Metadata
		m.Metadata = *req.Metadata
	}
	if req.Importance != nil {
		before["importance"], after["importance"] = m.Importance, *req.Importance
		m.Importance = *req.Importance
	}
	return before, after
}
