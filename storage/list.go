package storage

import (
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/memcluster/memcluster/memory"
)

// ListFilter narrows a listing of one user's memories; the zero value keeps every memory.
type ListFilter struct {
	Types   []memory.Type `json:"types,omitempty"`
	AgentID string        `json:"agent_id,omitempty"`
	RunID   string        `json:"run_id,omitempty"`
	Tags    []string      `json:"tags,omitempty"` // a memory must carry every one
	From    time.Time     `json:"from,omitzero"`  // occurred_at >= From
	To      time.Time     `json:"to,omitzero"`    // occurred_at < To
}

// Keeps reports whether m passes f.
func (f ListFilter) Keeps(m *memory.Memory) bool {
	switch {
	case len(f.Types) > 0 && !slices.Contains(f.Types, m.Type),
		f.AgentID != "" && m.AgentID != f.AgentID,
		f.RunID != "" && m.RunID != f.RunID,
		!f.From.IsZero() && m.OccurredAt.Before(f.From),
		!f.To.IsZero() && !m.OccurredAt.Before(f.To):
		return false
	}
	for _, t := range f.Tags {
		if !slices.Contains(m.Tags, t) {
			return false
		}
	}
	return true
}

// ListPage is one page of a listing: the memories in id order (creation order), and the id to continue
// after ("" when the user has no more records).
type ListPage struct {
	Memories []memory.Memory `json:"memories"`
	Next     string          `json:"next"`
}

// List returns up to limit of user's memories with ids after `after` that pass f, in id order, without
// embeddings. It examines at most scan records, so a narrow filter over a large user answers a short (even
// empty) page with a Next to go on from instead of reading the whole user in one request.
func (d *DB) List(shard uint32, user, after string, limit, scan int, f ListFilter) (ListPage, error) {
	out := ListPage{Memories: []memory.Memory{}}
	lo, hi := UserRange(shard, user)
	if after != "" {
		lo = append(MemoryKey(shard, user, after), 0) // the first key past after's
	}
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return out, err
	}
	defer it.Close()
	seen, last := 0, ""
	for ok := it.First(); ok; ok = it.Next() {
		if len(out.Memories) == limit || seen == scan {
			out.Next = last // more may follow
			break
		}
		seen++
		m, err := DecodeMemory(it.Value())
		if err != nil {
			return out, fmt.Errorf("list %x: %w", it.Key(), err)
		}
		last = m.ID
		if f.Keeps(&m) {
			m.Embedding = nil
			out.Memories = append(out.Memories, m)
		}
	}
	return out, it.Error()
}

// ReadSideAfter is ReadSide for paging through a whole space: the records whose key sorts after `after`
// ("" from the first), at most limit of them.
func (d *DB) ReadSideAfter(shard uint32, space byte, user, after string, limit int) (SideRead, error) {
	return d.readSide(shard, space, user, "", after, limit)
}
