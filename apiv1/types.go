package apiv1

import (
	"time"

	"github.com/memcluster/memcluster/memory"
)

// Routes of the v1 API.
const (
	PathMemories      = "/v1/memories"       // POST: put
	PathMemoriesBatch = "/v1/memories/batch" // POST: up to MaxBatch memories of one user, atomically
	PathMemory        = "/v1/memories/{id}"  // GET, PATCH, DELETE; ?user_id=U[&stale=true][&session_type=group]
	PathSearch        = "/v1/search"         // POST
	PathClusterStatus = "/v1/cluster/status" // GET
	PathOpenAPI       = "/v1/openapi.json"   // GET: this API's OpenAPI 3.1 document
	PathHealthz       = "/healthz"
	PathReadyz        = "/readyz"
	PathMetrics       = "/metrics"
)

// HeaderShardLeader names, on the answer to a request for one user, the API address of the node that leads the
// user's shard ("http://host:port"), when the answering node knows it. A client may send that user's next
// requests there: any node answers any request, but a node that does not lead the shard forwards it to the one
// that does, one more hop. Absent when no leader is known.
const HeaderShardLeader = "Memcluster-Shard-Leader"

// PutRequest is the body of POST /v1/memories. Unknown fields are rejected.
type PutRequest struct {
	UserID     string            `json:"user_id"`
	AgentID    string            `json:"agent_id,omitempty"`
	RunID      string            `json:"run_id,omitempty"`
	Type       string            `json:"type,omitempty"` // default episodic
	Text       string            `json:"text"`
	OccurredAt *time.Time        `json:"occurred_at,omitempty"` // RFC 3339; default: the time the node received it
	Tags       []string          `json:"tags,omitempty"`
	Entities   []string          `json:"entities,omitempty"`
	Importance *float64          `json:"importance,omitempty"` // 0..1, default 0.5
	Metadata   map[string]string `json:"metadata,omitempty"`
	// Scope is "private" (default: only requests for the user's own sessions see it) or "shared" (agent- or
	// workspace-wide: group sessions see it too).
	Scope string `json:"scope,omitempty"`
}

// Session types of a read. A group session (several people, e.g. a channel) never sees private memory.
const (
	SessionPrivate = "private"
	SessionGroup   = "group"
)

// PutResponse is the answer to a put: the stored memory (without its embedding).
type PutResponse struct {
	memory.Memory
}

// MaxBatch bounds the memories of one batch put.
const MaxBatch = 1000

// PutBatchRequest is the body of POST /v1/memories/batch: memories of ONE user, stored all or none (they go to
// one shard as one Raft entry). Bulk imports of a user's history use it.
type PutBatchRequest struct {
	Memories []PutRequest `json:"memories"`
}

// PutBatchResponse lists the stored memories in request order.
type PutBatchResponse struct {
	Memories []memory.Memory `json:"memories"`
}

// UpdateRequest is the body of PATCH /v1/memories/{id}?user_id=U: each field given replaces the stored one (tags
// and metadata as a whole: [] or {} clears them); at least one is required. A new text is embedded again. The
// answer is the memory as stored; the memory's history records the change as UPDATE.
type UpdateRequest struct {
	Text       *string            `json:"text,omitempty"`
	Tags       *[]string          `json:"tags,omitempty"`
	Metadata   *map[string]string `json:"metadata,omitempty"`
	Importance *float64           `json:"importance,omitempty"` // 0..1
}

// DeleteResponse is the answer to DELETE /v1/memories/{id}.
type DeleteResponse struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// SearchRequest is the body of POST /v1/search. Unknown fields are rejected.
type SearchRequest struct {
	UserID   string     `json:"user_id"`
	Query    string     `json:"query"`
	K        int        `json:"k,omitempty"`         // max results, default 6, 1..1000
	MinScore *float64   `json:"min_score,omitempty"` // default 0.35; 0 keeps everything
	Types    []string   `json:"types,omitempty"`
	AgentID  string     `json:"agent_id,omitempty"`
	RunID    string     `json:"run_id,omitempty"`
	Tags     []string   `json:"tags,omitempty"` // a result carries every tag listed
	From     *time.Time `json:"from,omitempty"` // occurred_at >= from
	To       *time.Time `json:"to,omitempty"`   // occurred_at < to
	// Weights of the fusion; defaults 0.7 and 0.3.
	VectorWeight *float64 `json:"vector_weight,omitempty"`
	TextWeight   *float64 `json:"text_weight,omitempty"`
	// CandidateMultiplier: each side fetches k × this many candidates; default 4.
	CandidateMultiplier int `json:"candidate_multiplier,omitempty"`
	// RecencyHalfLife, a Go duration ("720h"), turns on recency decay: score × 0.5^(age/half-life).
	RecencyHalfLife string `json:"recency_half_life,omitempty"`
	// Stale allows a follower to answer from its local replica without checking with the leader.
	Stale bool `json:"stale,omitempty"`
	// Mode is "pipeline" (default for one user: query planning, BM25-weighted fusion, actor and time factors,
	// episode-neighbour expansion, scores calibrated to the query's match strength; retrieval/DESIGN.md) or
	// "hybrid" (the weighted fusion above; the default, and the only mode, of a query across users).
	Mode string `json:"mode,omitempty"`
	// SessionType is "private" (default) or "group": a group session's search returns shared memories only.
	SessionType string `json:"session_type,omitempty"`
	// IncludeRetired keeps superseded and retracted facts in the results (they are left out by default).
	IncludeRetired bool `json:"include_retired,omitempty"`
	// ShardTimeout, a Go duration ("500ms"), is a query across users' deadline for each shard (default 2s).
	// A query across users is one without user_id: it fans out to every shard and searches every user the
	// token may see (narrowed by agent_id, run_id, session_type and the other filters).
	ShardTimeout string `json:"shard_timeout,omitempty"`
	// Now is the time the question is asked (RFC 3339): the pipeline's relative time expressions ("last
	// week", "two days ago") and recency decay are measured from it. Default: the node's clock. A replayed
	// conversation or a benchmark passes the date it was asked on.
	Now *time.Time `json:"now,omitempty"`
}

// SearchResult is one hit with its component scores.
type SearchResult struct {
	memory.Memory
	Score       float64 `json:"score"`
	VectorScore float64 `json:"vector_score"`
	TextScore   float64 `json:"text_score"`
	Recency     float64 `json:"recency"` // the recency factor applied (1 when decay is off)
	// Pipeline mode only: score received from neighbouring memories of the same episode, the factor for
	// being from an actor the query names, and the query plan (first result only).
	Context float64     `json:"context,omitempty"`
	Actor   float64     `json:"actor,omitempty"`
	Plan    *SearchPlan `json:"plan,omitempty"`
	// RerankScore is the rerank model's score when the node has one (memnode --rerank-url) and it answered:
	// the results are then in its order, each keeping its pipeline score.
	RerankScore *float64 `json:"rerank_score,omitempty"`
}

// SearchPlan is what the pipeline mode understood of the query.
type SearchPlan struct {
	Terms     []string `json:"terms"`            // content words, without stop and question words
	Actors    []string `json:"actors,omitempty"` // the user's actors (learned from their memories) the query names
	TextQuery string   `json:"text_query"`       // what went to BM25
	Fusion    string   `json:"fusion"`
}

// SearchResponse is the answer to a search, best first.
type SearchResponse struct {
	Results []SearchResult `json:"results"`
	// Partial is set when a query across users missed shards; MissingShards names them and why.
	Partial       bool           `json:"partial,omitempty"`
	MissingShards []ShardFailure `json:"missing_shards,omitempty"`
}

// ShardFailure is a shard a query across users did not hear from in time.
type ShardFailure struct {
	Shard uint32 `json:"shard"`
	Error string `json:"error"`
}

// Error is the body of every non-2xx answer.
type Error struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody carries a stable code, a message that names the problem, and the field when one is at fault.
type ErrorBody struct {
	Code    string `json:"code"` // invalid_argument, not_found, too_large, unavailable, internal, method_not_allowed
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// NodeStatus is one member as the cluster sees it.
type NodeStatus struct {
	ID         string `json:"id"`
	State      string `json:"state"` // alive, suspect, dead, left, draining, removed
	HTTPAddr   string `json:"http_addr"`
	RaftAddr   string `json:"raft_addr"`
	GossipAddr string `json:"gossip_addr"`
	Zone       string `json:"zone,omitempty"`
	Replicas   int    `json:"replicas"` // shard replicas placed on it
	Leaders    int    `json:"leaders"`  // shards it leads
	Bytes      uint64 `json:"bytes"`    // estimated disk bytes of its replicas (0 when it did not report)
}

// ShardStatus is one shard's Raft group.
type ShardStatus struct {
	ID           int      `json:"id"`
	Leader       string   `json:"leader"` // node id, empty when none
	Replicas     []string `json:"replicas"`
	LiveReplicas int      `json:"live_replicas"`
	Want         int      `json:"want_replicas"`
	AppliedIndex uint64   `json:"applied_index,omitempty"`
	// Per replica that reported: its applied index and how far it trails the leader's.
	Progress []ReplicaProgress `json:"progress,omitempty"`
	Bytes    uint64            `json:"bytes,omitempty"` // the leader's estimate of the shard's disk bytes
	Moving   bool              `json:"moving,omitempty"`
	// The hash range it owns, whether a split of it (as parent or child) is under way, and its memory
	// records as its leader counts them (-1 when the leader did not report).
	Range     HashRange `json:"range"`
	Splitting bool      `json:"splitting,omitempty"`
	Memories  int64     `json:"memories"`
}

// ReplicaProgress is one replica of a shard.
type ReplicaProgress struct {
	Node    string `json:"node"`
	Applied uint64 `json:"applied"`
	Lag     uint64 `json:"lag"`
	// IndexesLoading: the replica is in its group but its indexes are still loading after a restart; searches of
	// it wait until they have.
	IndexesLoading bool `json:"indexes_loading,omitempty"`
}

// MoveStatus is a replica move under way: To is being added (catching up as a non-voter, then promoted),
// From is being removed once every placed replica votes.
type MoveStatus struct {
	Shard int    `json:"shard"`
	From  string `json:"from,omitempty"`
	To    string `json:"to,omitempty"`
	Stage string `json:"stage"` // adding, catching_up, removing
}

// ClusterStatus is the answer to GET /v1/cluster/status.
type ClusterStatus struct {
	NodeID  string        `json:"node_id"` // the node that answered
	Nodes   []NodeStatus  `json:"nodes"`
	Shards  []ShardStatus `json:"shards"`
	Healthy bool          `json:"healthy"` // every shard has a leader and its full replica count alive
	// Moves under way and whether rebalancing is paused (memctl cluster rebalance --pause).
	Moves           []MoveStatus `json:"moves"`
	RebalancePaused bool         `json:"rebalance_paused"`
	// The shard map: buckets of the hash space (the shard count the cluster formed with), its version (bumped
	// by every split step) and the split under way, if any.
	Buckets    int            `json:"buckets"`
	MapVersion uint64         `json:"map_version"`
	Split      *SplitUnderWay `json:"split,omitempty"`
}

// SplitUnderWay is a shard split that has begun and not finished.
type SplitUnderWay struct {
	Shard int `json:"shard"`
	Child int `json:"child"`
}
