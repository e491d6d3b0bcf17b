package transfer

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/internal/formats"
	"github.com/memcluster/memcluster/memory"
)

// Format names the file and Version its layout; a reader refuses a newer version.
const (
	Format  = "memcluster-export"
	Version = formats.Export
)

// Kinds of line besides the record kinds of apiv1 (fact, history, pattern, session, signal, cold).
const (
	KindHeader = "header"
	KindMemory = "memory"
)

// Errors of the package.
var (
	// ErrFormat marks a file or a line that is not a memcluster export this build reads.
	ErrFormat = errors.New("not a memcluster export")
	// ErrStopped marks an import that stopped at the first failing line (OnError "stop").
	ErrStopped = errors.New("import stopped")
)

// Header is the first line of an export.
type Header struct {
	Kind    string    `json:"kind"` // "header"
	Format  string    `json:"format"`
	Version int       `json:"version"`
	Build   string    `json:"build"` // the memctl version that wrote it
	Time    time.Time `json:"time"`
	Source  Source    `json:"source"`
	// What was asked for: one user, every user, or an agent's memories only (AgentID: user-level records —
	// facts, history, patterns, signals, cold segments — are then left out).
	Users    []string `json:"users,omitempty"`
	AllUsers bool     `json:"all_users,omitempty"`
	AgentID  string   `json:"agent_id,omitempty"`
}

// Source names the cluster an export was read from.
type Source struct {
	Addr   string `json:"addr"`    // the node memctl talked to
	NodeID string `json:"node_id"` // the node that answered
	Nodes  int    `json:"nodes"`
}

// Line is one item of an export: a memory (with the fingerprint of the model that embedded it, never the
// vector) or a record of one of apiv1.RecordKinds.
type Line struct {
	Kind   string          `json:"kind"`
	UserID string          `json:"user_id"`
	Memory *memory.Memory  `json:"memory,omitempty"`
	Key    string          `json:"key,omitempty"`
	Value  json.RawMessage `json:"value,omitempty"`
	Items  []memory.Memory `json:"items,omitempty"` // a cold segment's memories, for reading
}

// record turns a line into the record an import sends.
func (l Line) record() apiv1.Record {
	return apiv1.Record{Kind: l.Kind, Key: l.Key, Value: l.Value}
}

// parseHeader reads the first line.
func parseHeader(b []byte) (Header, error) {
	var h Header
	if err := json.Unmarshal(b, &h); err != nil || h.Kind != KindHeader || h.Format != Format {
		return h, fmt.Errorf("%w: line 1 is not a %s header", ErrFormat, Format)
	}
	if h.Version < 1 || h.Version > Version {
		return h, fmt.Errorf("%w: format version %d (this build reads 1 to %d)", ErrFormat, h.Version, Version)
	}
	return h, nil
}

// parseLine reads an item line, checking what an import needs of it.
func parseLine(b []byte) (Line, error) {
	var l Line
	if err := json.Unmarshal(b, &l); err != nil {
		return l, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	switch {
	case l.UserID == "":
		return l, fmt.Errorf("%w: no user_id", ErrFormat)
	case l.Kind == KindMemory && l.Memory == nil:
		return l, fmt.Errorf("%w: a memory line without memory", ErrFormat)
	case l.Kind == KindMemory:
		return l, nil
	case !isRecordKind(l.Kind):
		return l, fmt.Errorf("%w: unknown kind %q", ErrFormat, l.Kind)
	case l.Key == "" || len(l.Value) == 0:
		return l, fmt.Errorf("%w: a %s line needs key and value", ErrFormat, l.Kind)
	}
	return l, nil
}

func isRecordKind(k string) bool {
	for _, rk := range apiv1.RecordKinds {
		if k == rk {
			return true
		}
	}
	return false
}
