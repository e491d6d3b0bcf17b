package mem0

import (
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
)

// historyOut is one change of a memory as mem0 answers it.
type historyOut struct {
	ID         string            `json:"id"`
	MemoryID   string            `json:"memory_id"`
	Input      []message         `json:"input"`
	OldMemory  *string           `json:"old_memory"`
	NewMemory  string            `json:"new_memory"`
	UserID     string            `json:"user_id"`
	AgentID    *string           `json:"agent_id"`
	Event      string            `json:"event"`
	Categories []string          `json:"categories"`
	Metadata   map[string]string `json:"metadata"`
	CreatedAt  time.Time         `json:"created_at"`
	UpdatedAt  time.Time         `json:"updated_at"`
	IsDeleted  bool              `json:"is_deleted"`
}

// history lists a memory's recorded changes. memcluster records the changes of facts; a memory stored as it
// is has none recorded, and answers its one ADD.
func (c *call) history(mid string) ([]historyOut, error) {
	m, err := c.get(mid)
	if err != nil {
		return nil, err
	}
	evs, err := c.cl.History(c.ctx, m.UserID, m.ID)
	if err != nil {
		return nil, err
	}
	out := make([]historyOut, 0, len(evs)+1)
	for _, e := range evs {
		if e.Op == "NONE" {
			continue // a confirmation changes nothing; mem0's history lists changes only
		}
		before, after := statement(e.Before), statement(e.After)
		if e.Op == "UPDATE" && after == "" {
			after = m.Text // an update of tags or metadata only: the memory reads the same
		}
		out = append(out, historyEntry(m, e.ID, e.Op, before, after, e.Time))
	}
	// A memory stored as it is has no ADD recorded (facts do): its history starts with the text it was
	// stored with, which the first update's "before" holds.
	if len(out) == 0 || out[0].Event != "ADD" {
		first := m.Text
		if len(out) > 0 && out[0].OldMemory != nil {
			first = *out[0].OldMemory
		}
		out = append([]historyOut{historyEntry(m, m.ID, "ADD", "", first, m.CreatedAt)}, out...)
	}
	return out, nil
}

func historyEntry(m memory.Memory, id, op, before, after string, at time.Time) historyOut {
	tags := m.Tags
	if tags == nil {
		tags = []string{}
	}
	return historyOut{ID: id, MemoryID: memID(m.UserID, m.ID), Input: []message{}, OldMemory: orNil(before),
		NewMemory: after, UserID: m.UserID, AgentID: orNil(m.AgentID), Event: op, Categories: tags,
		Metadata: map[string]string{}, CreatedAt: at, UpdatedAt: at, IsDeleted: op == "DELETE"}
}

// statement is the text in a history event's before or after: a fact's statement (a decoded apiv1.Fact), or
// a memory's text from an update in place.
func statement(v any) string {
	switch f := v.(type) {
	case map[string]any:
		if s, ok := f["statement"].(string); ok {
			return s
		}
		s, _ := f["text"].(string)
		return s
	case apiv1.Fact:
		return f.Statement
	}
	return ""
}
