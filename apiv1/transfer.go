package apiv1

import (
	"encoding/json"

	"github.com/memcluster/memcluster/memory"
)

// Listing, export and import routes.
const (
	// PathUserMemories is GET: one page of a user's memories in id (creation) order, without embeddings.
	// Query: type (repeatable), agent_id, run_id, tag (repeatable: every one), from, to (RFC 3339, occurred_at
	// in [from, to)), limit (1..MaxListLimit, default DefaultListLimit), cursor (a previous page's
	// next_cursor).
	PathUserMemories = "/v1/users/{user_id}/memories"
	// PathUserRecords is GET: one page of a user's records of one kind (RecordKinds), in key order; ?limit,
	// ?cursor as above.
	PathUserRecords = "/v1/users/{user_id}/records/{kind}"
	// PathUserImport is POST: memories with their ids and records, written as they are (ImportRequest).
	PathUserImport = "/v1/users/{user_id}/import"
	// PathUsers is GET (admin): one page of the users that have memories; ?limit, ?cursor, and ?prefix (only
	// the users whose id starts with it).
	PathUsers = "/v1/users"
)

// Page sizes of the listing routes.
const (
	DefaultListLimit = 100
	MaxListLimit     = 1000
)

// ListResponse is one page of GET /v1/users/{user_id}/memories. NextCursor is empty on the last page; a
// page may hold fewer memories than the limit (even none) while NextCursor is set, when the filter kept few
// of the records one page examines.
type ListResponse struct {
	UserID     string          `json:"user_id"`
	Memories   []memory.Memory `json:"memories"`
	NextCursor string          `json:"next_cursor,omitempty"`
}

// Record kinds: a user's state beside its memories, as GET .../records/{kind} lists it and import takes it.
const (
	RecordFact    = "fact"    // value: the fact (statement, triple, validity, provenance, supersession)
	RecordHistory = "history" // key: event id; value: the event (memory_id, op, time, before, after, cause)
	RecordPattern = "pattern" // key: pattern key; value: the pattern with its support and status
	RecordSession = "session" // key: run id; value: the working session (window, summary, pending turns)
	RecordSignal  = "signal"  // key: s/<signal>/<time> (a sample) or a/<signal>/<day> (an anomaly reported)
	RecordCold    = "cold"    // key: segment key; value: the segment, base64; items: its memories
)

// RecordKinds lists every record kind in the order an export writes them.
var RecordKinds = []string{RecordFact, RecordHistory, RecordPattern, RecordSession, RecordSignal, RecordCold}

// Record is one of a user's records. Value is the record as the node stores it (JSON); for a cold segment,
// the segment's bytes (base64) with Items, its memories decoded, for reading only.
type Record struct {
	Kind  string          `json:"kind"`
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
	Items []memory.Memory `json:"items,omitempty"`
}

// RecordsResponse is one page of GET .../records/{kind}.
type RecordsResponse struct {
	UserID     string   `json:"user_id"`
	Kind       string   `json:"kind"`
	Records    []Record `json:"records"`
	NextCursor string   `json:"next_cursor,omitempty"`
}

// MaxImport bounds the memories plus records of one import request.
const MaxImport = 500

// ImportRequest is the body of POST /v1/users/{user_id}/import: memories keep their ids, times and
// metadata (embeddings are computed by this cluster's embedder), records are written as given. Nothing
// is consolidated. An item equal to what is stored is left alone, so importing twice changes nothing.
// Everything is written in one transaction of the user: all or none.
type ImportRequest struct {
	Memories []memory.Memory `json:"memories,omitempty"`
	Records  []Record        `json:"records,omitempty"`
}

// ImportResponse counts what an import did, per item kind ("memory" and the record kinds).
type ImportResponse struct {
	UserID string                  `json:"user_id"`
	Counts map[string]ImportCounts `json:"counts"`
}

// ImportCounts is what happened to the items of one kind.
type ImportCounts struct {
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
}

// UsersResponse is one page of GET /v1/users, users in shard order and by id within a shard.
type UsersResponse struct {
	Users      []string `json:"users"`
	NextCursor string   `json:"next_cursor,omitempty"`
}
