package apiv1

import (
	"time"

	"github.com/memcluster/memcluster/memory"
)

// Routes of the memory model: working sessions, facts, history, signals, patterns and the graph. Every one is
// scoped to one user, whose id is in the path.
const (
	PathSession         = "/v1/users/{user_id}/sessions/{run_id}"          // GET: the working memory
	PathSessionMessages = "/v1/users/{user_id}/sessions/{run_id}/messages" // POST: append messages
	PathSessionFlush    = "/v1/users/{user_id}/sessions/{run_id}/flush"    // POST: consolidate what is pending
	PathSessionEnd      = "/v1/users/{user_id}/sessions/{run_id}/end"      // POST: flush and drop the session
	PathRemember        = "/v1/users/{user_id}/remember"                   // POST: an explicit "remember this"
	PathFacts           = "/v1/users/{user_id}/facts"                      // GET ?all=true&as_of=RFC3339
	PathHistory         = "/v1/users/{user_id}/history"                    // GET ?memory_id=ID
	PathSignals         = "/v1/users/{user_id}/signals"                    // POST: perceptual samples
	PathAggregates      = "/v1/users/{user_id}/signals/{signal}/daily"     // GET: daily aggregates
	PathConsolidate     = "/v1/users/{user_id}/consolidate"                // POST: pattern consolidation now
	PathPatternCorrect  = "/v1/users/{user_id}/patterns/correct"           // POST: a user correction
	PathGraph           = "/v1/users/{user_id}/graph"                      // GET ?concept=C&depth=N
)

// MaxMessages bounds the messages of one append.
const MaxMessages = 100

// Message is one turn of a working session.
type Message struct {
	Role string     `json:"role"` // user, assistant or tool
	Text string     `json:"text"`
	Time *time.Time `json:"time,omitempty"` // default: when the node received it
	// TaskEnd marks the message that completes a task (e.g. the last tool result): the next user message
	// starts a new episode.
	TaskEnd bool `json:"task_end,omitempty"`
}

// AppendRequest is the body of POST .../messages.
type AppendRequest struct {
	AgentID  string    `json:"agent_id,omitempty"`
	Messages []Message `json:"messages"`
}

// SessionState is a working session as the agent sees it.
type SessionState struct {
	UserID     string    `json:"user_id"`
	RunID      string    `json:"run_id"`
	Window     []Message `json:"window"`  // the last turns, verbatim
	Summary    string    `json:"summary"` // rolling summary of what fell out of the window
	Tokens     int       `json:"tokens"`  // estimate of window + summary
	Pending    int       `json:"pending"` // messages waiting for consolidation
	FlushDue   bool      `json:"flush_due,omitempty"`
	LastActive time.Time `json:"last_active"`
}

// FactDecision is one consolidation decision about a fact.
type FactDecision struct {
	Decision string `json:"decision"` // ADD, UPDATE, DELETE or NONE
	Fact     *Fact  `json:"fact,omitempty"`
	Target   string `json:"target,omitempty"` // the existing fact superseded, retracted or confirmed
	Reason   string `json:"reason"`
}

// Rejected is a sentence the write gate kept out of long-term memory.
type Rejected struct {
	Sentence string `json:"sentence"`
	Reason   string `json:"reason"`
	// Kept says where a rejected sentence went instead of the facts, if anywhere: "episode" when an explicit
	// remember of a passing state was stored as an episode (KeptID), never as a current fact.
	Kept   string `json:"kept,omitempty"`
	KeptID string `json:"kept_id,omitempty"`
}

// ConsolidationResult is what a flush, an end of session or a remember did.
type ConsolidationResult struct {
	UserID   string          `json:"user_id"`
	RunID    string          `json:"run_id,omitempty"`
	Messages int             `json:"messages"` // messages consolidated
	Episodes []memory.Memory `json:"episodes"`
	Facts    []FactDecision  `json:"facts"`
	Rejected []Rejected      `json:"rejected,omitempty"`
	Ended    bool            `json:"ended,omitempty"`
	Trigger  string          `json:"trigger"` // flush, end, remember, idle, consolidate
}

// RememberRequest is the body of POST .../remember.
type RememberRequest struct {
	Text string     `json:"text"`
	Time *time.Time `json:"time,omitempty"`
}

// Fact is a semantic memory: a triple with its statement, validity and provenance.
type Fact struct {
	ID         string     `json:"id"`
	Statement  string     `json:"statement"`
	Subject    string     `json:"subject"`
	Predicate  string     `json:"predicate"`
	Object     string     `json:"object"`
	Confidence float64    `json:"confidence"`
	Status     string     `json:"status"` // current, superseded or retracted
	ValidFrom  time.Time  `json:"valid_from"`
	ValidTo    *time.Time `json:"valid_to,omitempty"`
	RecordedAt time.Time  `json:"recorded_at"`
	// EndedAt is when the memory recorded the end (ValidTo is when it stopped being true).
	EndedAt      *time.Time `json:"ended_at,omitempty"`
	SupersededBy string     `json:"superseded_by,omitempty"`
	Provenance   []string   `json:"provenance"`
}

// FactsResponse lists a user's facts.
type FactsResponse struct {
	UserID string `json:"user_id"`
	Facts  []Fact `json:"facts"`
}

// HistoryEvent is one recorded change of a memory.
type HistoryEvent struct {
	ID       string    `json:"id"`
	MemoryID string    `json:"memory_id"`
	Op       string    `json:"op"` // ADD, UPDATE, DELETE, NONE
	Time     time.Time `json:"time"`
	Before   any       `json:"before,omitempty"`
	After    any       `json:"after,omitempty"`
	Cause    string    `json:"cause"` // the trigger and reason
}

// HistoryResponse lists history events, oldest first.
type HistoryResponse struct {
	UserID string         `json:"user_id"`
	Events []HistoryEvent `json:"events"`
}

// Sample is one perceptual measurement.
type Sample struct {
	Time  *time.Time `json:"time,omitempty"` // default: when the node received it
	Value float64    `json:"value"`
}

// MaxSamples bounds the samples of one request.
const MaxSamples = 10000

// SignalsRequest is the body of POST .../signals: samples of one named signal.
type SignalsRequest struct {
	Signal  string   `json:"signal"`
	Samples []Sample `json:"samples"`
}

// SignalsResponse says what was stored and which anomalies became episodes.
type SignalsResponse struct {
	UserID    string          `json:"user_id"`
	Signal    string          `json:"signal"`
	Stored    int             `json:"stored"`
	Anomalies []memory.Memory `json:"anomalies"`
}

// DailyAggregate is one signal over one day.
type DailyAggregate struct {
	Day   time.Time `json:"day"`
	Count int       `json:"count"`
	Min   float64   `json:"min"`
	Max   float64   `json:"max"`
	Mean  float64   `json:"mean"`
	P50   float64   `json:"p50"`
}

// AggregatesResponse lists a signal's daily aggregates, oldest first.
type AggregatesResponse struct {
	UserID string           `json:"user_id"`
	Signal string           `json:"signal"`
	Days   []DailyAggregate `json:"days"`
}

// Pattern is a recurring theme across episodes.
type Pattern struct {
	Key        string   `json:"key"`
	Statement  string   `json:"statement"`
	Episodes   []string `json:"episodes"`
	Support    int      `json:"support"`
	Confidence float64  `json:"confidence"`
	Status     string   `json:"status"` // tentative, promoted, retracted
	// FirstSeen and LastSeen are the first and latest evidence of the behaviour: its valid time.
	FirstSeen time.Time `json:"first_seen,omitzero"`
	LastSeen  time.Time `json:"last_seen,omitzero"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ConsolidateResponse is what pattern consolidation did.
type ConsolidateResponse struct {
	UserID   string         `json:"user_id"`
	Episodes int            `json:"episodes"` // episodes considered
	Patterns []Pattern      `json:"patterns"`
	Facts    []FactDecision `json:"facts"`
}

// CorrectRequest is the body of POST .../patterns/correct.
type CorrectRequest struct {
	Key string `json:"key"`
}

// GraphResponse is a bounded subgraph of current facts around a concept.
type GraphResponse struct {
	UserID string      `json:"user_id"`
	Nodes  []GraphNode `json:"nodes"`
	Edges  []GraphEdge `json:"edges"`
}

// GraphNode is an entity or concept.
type GraphNode struct {
	ID   string `json:"id"`
	Key  string `json:"key"` // the case- and article-insensitive form edges name it by
	Hops int    `json:"hops"`
}

// GraphEdge is a current fact between two nodes, named by their keys.
type GraphEdge struct {
	From       string  `json:"from"`
	To         string  `json:"to"`
	Predicate  string  `json:"predicate"`
	FactID     string  `json:"fact_id"`
	Statement  string  `json:"statement"`
	Confidence float64 `json:"confidence"`
}

// PathContext is POST: the retrieval pipeline — plan, hot retrieval per memory type, confidence, escalation to
// the archive, and context packaged to a token budget.
const PathContext = "/v1/users/{user_id}/context"

// DefaultContextBudget is the token budget of a context request that names none.
const DefaultContextBudget = 800

// ContextRequest is the body of POST .../context.
type ContextRequest struct {
	Query       string     `json:"query"`
	RunID       string     `json:"run_id,omitempty"`       // read this session's working memory first
	Budget      int        `json:"budget,omitempty"`       // tokens, default DefaultContextBudget, 20..100000
	Now         *time.Time `json:"now,omitempty"`          // anchors "yesterday", "last week"; default: the node's clock
	Explain     bool       `json:"explain,omitempty"`      // include the plan and every stage
	SessionType string     `json:"session_type,omitempty"` // "group": shared memory only
	// Mode is the search mode of the memory reads: "pipeline" (default) or "hybrid" (as in SearchRequest).
	Mode string `json:"mode,omitempty"`
}

// ContextItem is one piece of evidence in the packaged context.
type ContextItem struct {
	ID        string     `json:"id"`
	Text      string     `json:"text"`
	Time      *time.Time `json:"time,omitempty"`
	Score     float64    `json:"score"`
	Tier      string     `json:"tier"` // hot or cold
	Cue       string     `json:"cue"`  // e.g. "2026-03-05, confidence 0.82, cold"
	Truncated bool       `json:"truncated,omitempty"`
}

// ContextBlock groups the items of one kind: working, semantic, episodic, perceptual.
type ContextBlock struct {
	Kind  string        `json:"kind"`
	Title string        `json:"title"`
	Items []ContextItem `json:"items"`
}

// ContextResponse is the packaged context and how much to trust it.
type ContextResponse struct {
	UserID     string         `json:"user_id"`
	Blocks     []ContextBlock `json:"blocks"`
	Text       string         `json:"text"` // the blocks rendered for a prompt
	Tokens     int            `json:"tokens"`
	Budget     int            `json:"budget"`
	Confidence float64        `json:"confidence"`
	Escalated  bool           `json:"escalated"` // the archive was searched
	Uncertain  bool           `json:"uncertain"` // confidence stayed under the threshold
	LeftOut    []LeftOut      `json:"left_out,omitempty"`
	Plan       any            `json:"plan,omitempty"`   // with explain
	Stages     []ContextStage `json:"stages,omitempty"` // with explain
}

// LeftOut names an item missing from the context or cut short, and why.
type LeftOut struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// ContextStage is one step of the pipeline, as --explain shows it.
type ContextStage struct {
	Stage  string `json:"stage"` // plan, working, semantic, episodic, perceptual, confidence, escalate, package
	Detail any    `json:"detail"`
}

// PathTierRun is POST (admin): move a user's aged or low-value hot memories to cold segments now; without
// user_id, every user's, shard by shard.
const PathTierRun = "/v1/tier/run"

// TierRunRequest is the body of POST /v1/tier/run.
type TierRunRequest struct {
	UserID    string `json:"user_id"`
	OlderThan string `json:"older_than,omitempty"` // a duration such as "180d" or "4320h": overrides the per-type ages
}

// TierRunResponse says what moved.
type TierRunResponse struct {
	UserID   string   `json:"user_id"`
	Moved    int      `json:"moved"`    // hot memories now cold
	Segments []string `json:"segments"` // keys of the segments written
	// Partial: the run stopped before its deadline with more to move; what it moved is committed, and a
	// next run goes on. Cluster-wide runs (no user_id) also give the users examined and the shards that did
	// not finish.
	Users         int            `json:"users,omitempty"`
	Partial       bool           `json:"partial,omitempty"`
	MissingShards []ShardFailure `json:"missing_shards,omitempty"`
}

// PathTierStatus is GET ?user_id=U: a user's hot and cold counts and bytes per memory type; without
// user_id, the cluster's, per shard and in total.
const PathTierStatus = "/v1/tier/status"

// TierCount is the size of one tier of one memory type.
type TierCount struct {
	Type      string `json:"type"`
	HotCount  int    `json:"hot_count"`
	HotBytes  int64  `json:"hot_bytes"` // encoded records, embeddings included
	ColdCount int    `json:"cold_count"`
	ColdBytes int64  `json:"cold_bytes"` // segments as stored
	Archive   int    `json:"archive_entries"`
}

// TierStatusResponse is the answer to GET /v1/tier/status.
type TierStatusResponse struct {
	UserID string      `json:"user_id"`
	Shard  uint32      `json:"shard"`
	Types  []TierCount `json:"types"` // cluster-wide: the totals
	// Cluster-wide (no user_id): each shard's counts, and the shards that did not answer in time.
	Shards        []ShardTiers   `json:"shards,omitempty"`
	Partial       bool           `json:"partial,omitempty"`
	MissingShards []ShardFailure `json:"missing_shards,omitempty"`
}

// ShardTiers is one shard's tier sizes per memory type.
type ShardTiers struct {
	Shard uint32      `json:"shard"`
	Users int         `json:"users"`
	Types []TierCount `json:"types"`
}
