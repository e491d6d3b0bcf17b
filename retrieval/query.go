package retrieval

import (
	"fmt"
	"path"
	"time"

	"github.com/memcluster/memcluster/memory"
)

// Defaults from the reference design (OpenClaw's memorySearch): users expect these.
const (
	DefaultK                   = 6
	DefaultMinScore            = 0.35
	DefaultVectorWeight        = 0.7
	DefaultTextWeight          = 0.3
	DefaultCandidateMultiplier = 4
	MaxK                       = 1000
	// MaxCandidates caps what each side fetches (k × multiplier): the full-text index answers at most 1000.
	MaxCandidates = 1000
)

// Query is one search within one user's memories. The coordinator fills Vector (the query embedding) before
// sending it to the shard, so every replica scores with the same vector.
type Query struct {
	UserID     string        `json:"user_id"`
	Text       string        `json:"text"`
	Vector     []float32     `json:"vector,omitempty"`
	EmbedModel string        `json:"embed_model,omitempty"`
	K          int           `json:"k"`
	MinScore   float64       `json:"min_score"`
	Types      []memory.Type `json:"types,omitempty"`
	AgentID    string        `json:"agent_id,omitempty"`
	RunID      string        `json:"run_id,omitempty"`
	Tags       []string      `json:"tags,omitempty"`
	From       time.Time     `json:"from,omitzero"`
	To         time.Time     `json:"to,omitzero"`
	// SharedOnly: a group session's request sees only shared memories (memory.Shared).
	SharedOnly bool `json:"shared_only,omitempty"`
	// IncludeRetired keeps superseded and retracted facts in the results.
	IncludeRetired bool `json:"include_retired,omitempty"`
	// Archive searches the archive index (entries standing for cold memories) instead of hot memories.
	Archive bool `json:"archive,omitempty"`
	// AllUsers makes a fan-out query (fanout.go): UserID stays empty and every user of the shard matching
	// UserPatterns (path.Match patterns, the caller's token's limits; none: every user) is searched.
	AllUsers     bool     `json:"all_users,omitempty"`
	UserPatterns []string `json:"user_patterns,omitempty"`

	VectorWeight        float64       `json:"vector_weight"`
	TextWeight          float64       `json:"text_weight"`
	CandidateMultiplier int           `json:"candidate_multiplier"`
	RecencyHalfLife     time.Duration `json:"recency_half_life,omitempty"`
	Now                 time.Time     `json:"now,omitzero"` // reference time for recency, decided by the coordinator
	// Mode is ModeHybrid (the reference fusion above; "" means it here) or ModePipeline (pipeline.go). The
	// server fills DefaultMode when a request names none.
	Mode string `json:"mode,omitempty"`
}

// Search modes.
const (
	ModeHybrid   = "hybrid"
	ModePipeline = "pipeline"
)

// DefaultMode is the mode of a request that names none: the pipeline, the best measured (DESIGN.md), for one
// user's memories; hybrid for a query across users, since the pipeline works within one user's timeline.
func DefaultMode(allUsers bool) string {
	if allUsers {
		return ModeHybrid
	}
	return ModePipeline
}

// Result is one hit with the parts of its score.
type Result struct {
	Memory      memory.Memory `json:"memory"`
	Score       float64       `json:"score"`
	VectorScore float64       `json:"vector_score"`
	TextScore   float64       `json:"text_score"`
	Recency     float64       `json:"recency"`
	// Pipeline mode only: the share of score a memory got from its neighbours in the same episode, the
	// factor for being from an actor the query names, and the query plan (on the first result).
	Context float64 `json:"context,omitempty"`
	Actor   float64 `json:"actor,omitempty"`
	Plan    *Plan   `json:"plan,omitempty"`
	// Rerank is the rerank model's score when one ordered the results (the server's optional reranker).
	Rerank *float64 `json:"rerank,omitempty"`
}

// NewQuery returns a query with the reference defaults.
func NewQuery(user, text string) Query {
	return Query{UserID: user, Text: text, K: DefaultK, MinScore: DefaultMinScore,
		VectorWeight: DefaultVectorWeight, TextWeight: DefaultTextWeight, CandidateMultiplier: DefaultCandidateMultiplier}
}

// Validate checks the query; errors name the field and wrap memory.ErrInvalid.
func (q *Query) Validate() error {
	if err := q.validateUsers(); err != nil {
		return err
	}
	switch {
	case q.Text == "":
		return memory.FieldError("query", "required and must not be empty")
	case len(q.Text) > memory.DefaultLimits.MaxTextBytes:
		return memory.FieldError("query", "longer than %d bytes", memory.DefaultLimits.MaxTextBytes)
	case q.K < 1 || q.K > MaxK:
		return memory.FieldError("k", "must be between 1 and %d, got %d", MaxK, q.K)
	case q.MinScore < 0 || q.MinScore > 1:
		return memory.FieldError("min_score", "must be between 0 and 1")
	case q.VectorWeight < 0 || q.TextWeight < 0 || q.VectorWeight+q.TextWeight == 0:
		return memory.FieldError("vector_weight", "weights must be non-negative and not both zero")
	case q.CandidateMultiplier < 1 || q.CandidateMultiplier > 50:
		return memory.FieldError("candidate_multiplier", "must be between 1 and 50")
	case q.RecencyHalfLife < 0:
		return memory.FieldError("recency_half_life", "must be positive")
	case !q.From.IsZero() && !q.To.IsZero() && !q.From.Before(q.To):
		return memory.FieldError("from", "must be before to")
	case q.Mode != "" && q.Mode != ModeHybrid && q.Mode != ModePipeline:
		return memory.FieldError("mode", "must be %q or %q, got %q", ModeHybrid, ModePipeline, q.Mode)
	}
	for _, t := range q.Types {
		if _, err := memory.ParseType(string(t)); err != nil || t == "" {
			return memory.FieldError("types", "unknown type %q", t)
		}
	}
	return nil
}

// validateUsers: one user, or (AllUsers) none and valid patterns; a fan-out query has no pipeline mode.
func (q *Query) validateUsers() error {
	if !q.AllUsers {
		if len(q.UserPatterns) > 0 {
			return memory.FieldError("user_patterns", "only for a query across users")
		}
		return memory.DefaultLimits.ValidateID("user_id", q.UserID, true)
	}
	switch {
	case q.UserID != "":
		return memory.FieldError("user_id", "must be empty in a query across users")
	case q.Mode == ModePipeline:
		return memory.FieldError("mode", "%q searches one user's memories; a query across users is %q", ModePipeline, ModeHybrid)
	}
	for _, p := range q.UserPatterns {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return memory.FieldError("user_patterns", "bad pattern %q", p)
		}
	}
	return nil
}

func (q *Query) String() string { return fmt.Sprintf("user=%s k=%d text=%q", q.UserID, q.K, q.Text) }
