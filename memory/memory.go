package memory

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Sentinel errors. Validation errors wrap ErrInvalid and name the field.
var (
	// ErrInvalid marks a request that fails validation; the message names the field.
	ErrInvalid = errors.New("invalid")
	// ErrNotFound is returned when a memory does not exist for the given user.
	ErrNotFound = errors.New("not found")
)

// Type is the kind of memory.
type Type string

// The four kinds of memory.
const (
	Working    Type = "working"
	Episodic   Type = "episodic"
	Semantic   Type = "semantic"
	Perceptual Type = "perceptual"
)

// Types lists every valid Type.
var Types = []Type{Working, Episodic, Semantic, Perceptual}

// ParseType returns the Type named s; the empty string means Episodic.
func ParseType(s string) (Type, error) {
	if s == "" {
		return Episodic, nil
	}
	for _, t := range Types {
		if string(t) == s {
			return t, nil
		}
	}
	return "", FieldError("type", "unknown type %q (want working, episodic, semantic or perceptual)", s)
}

// Limits bounds the size of a memory's parts. Zero fields take defaults.
type Limits struct {
	MaxTextBytes     int // default 32 KiB
	MaxTags          int // default 64
	MaxTagBytes      int // default 128
	MaxIDBytes       int // user, agent and run ids; default 256
	MaxMetadataBytes int // serialised metadata; default 16 KiB
}

// DefaultLimits are the limits used when none are configured.
var DefaultLimits = Limits{
	MaxTextBytes:     32 << 10,
	MaxTags:          64,
	MaxTagBytes:      128,
	MaxIDBytes:       256,
	MaxMetadataBytes: 16 << 10,
}

// Memory is one stored memory record.
type Memory struct {
	ID         string            `json:"id"`
	UserID     string            `json:"user_id"`
	AgentID    string            `json:"agent_id,omitempty"`
	RunID      string            `json:"run_id,omitempty"`
	Type       Type              `json:"type"`
	Text       string            `json:"text"`
	OccurredAt time.Time         `json:"occurred_at"`
	CreatedAt  time.Time         `json:"created_at"`
	Tags       []string          `json:"tags,omitempty"`
	Entities   []string          `json:"entities,omitempty"`
	Importance float64           `json:"importance"`
	Metadata   map[string]string `json:"metadata,omitempty"`
	Embedding  []float32         `json:"embedding,omitempty"`
	EmbedModel string            `json:"embed_model,omitempty"`
	// Scope is Private (the default, also when empty) or Shared (agent- or workspace-wide). A request made for
	// a group session never sees private memory.
	Scope Scope `json:"scope,omitempty"`
}

// Scope says who may see a memory.
type Scope string

// Scopes.
const (
	Private Scope = "private"
	Shared  Scope = "shared"
)

// ParseScope returns the scope named s; the empty string means Private.
func ParseScope(s string) (Scope, error) {
	switch Scope(s) {
	case "", Private:
		return Private, nil
	case Shared:
		return Shared, nil
	}
	return "", FieldError("scope", "unknown scope %q (want private or shared)", s)
}

// IsShared reports whether a group session may see m.
func (m *Memory) IsShared() bool { return m.Scope == Shared }

// Metadata keys the memory model sets on the records it derives.
const (
	// MetaFactStatus is set on semantic memories that mirror a fact: current, superseded or retracted.
	// Searches leave out superseded and retracted facts unless asked for them.
	MetaFactStatus = "fact_status"
	// MetaSource says which write path made a memory: session, remember, pattern, perceptual.
	MetaSource = "source"
	// MetaTier is "archive" on the hot-tier index entry of cold memories: searched only on escalation.
	MetaTier = "tier"
)

// IsArchive reports whether m is an archive-index entry standing for cold memories.
func (m *Memory) IsArchive() bool { return m.Metadata[MetaTier] == "archive" }

// Retired reports whether m mirrors a fact that is no longer believed.
func (m *Memory) Retired() bool {
	s := m.Metadata[MetaFactStatus]
	return s != "" && s != "current"
}

// FieldError returns an ErrInvalid error naming field.
func FieldError(field, format string, args ...any) error {
	return &ValidationError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// ValidationError names the field that failed validation.
type ValidationError struct {
	Field string
	Msg   string
}

func (e *ValidationError) Error() string { return e.Field + ": " + e.Msg }

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Unwrap() error { return ErrInvalid }

// ValidateID checks a user, agent or run id.
func (l Limits) ValidateID(field, v string, required bool) error {
	l = l.withDefaults()
	switch {
	case v == "" && required:
		return FieldError(field, "required")
	case len(v) > l.MaxIDBytes:
		return FieldError(field, "longer than %d bytes", l.MaxIDBytes)
	case !utf8.ValidString(v):
		return FieldError(field, "not valid UTF-8")
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return FieldError(field, "contains a control character")
		}
	}
	return nil
}

// Validate checks the caller-supplied parts of m (not ID, CreatedAt or Embedding, which the server decides).
func (l Limits) Validate(m *Memory) error {
	l = l.withDefaults()
	if err := l.ValidateID("user_id", m.UserID, true); err != nil {
		return err
	}
	if err := l.ValidateID("agent_id", m.AgentID, false); err != nil {
		return err
	}
	if err := l.ValidateID("run_id", m.RunID, false); err != nil {
		return err
	}
	if _, err := ParseType(string(m.Type)); err != nil {
		return err
	}
	if _, err := ParseScope(string(m.Scope)); err != nil {
		return err
	}
	if err := l.validateText(m.Text); err != nil {
		return err
	}
	if err := l.validateList("tags", m.Tags); err != nil {
		return err
	}
	if err := l.validateList("entities", m.Entities); err != nil {
		return err
	}
	if m.Importance < 0 || m.Importance > 1 {
		return FieldError("importance", "must be between 0 and 1")
	}
	return l.validateMetadata(m.Metadata)
}

func (l Limits) validateText(s string) error { return l.ValidateText("text", s) }

// ValidateText checks a text field: present, valid UTF-8, at most MaxTextBytes.
func (l Limits) ValidateText(field, s string) error {
	l = l.withDefaults()
	switch {
	case strings.TrimSpace(s) == "":
		return FieldError(field, "required and must not be empty")
	case len(s) > l.MaxTextBytes:
		return FieldError(field, "longer than %d bytes", l.MaxTextBytes)
	case !utf8.ValidString(s):
		return FieldError(field, "not valid UTF-8")
	}
	return nil
}

func (l Limits) validateList(field string, vs []string) error {
	if len(vs) > l.MaxTags {
		return FieldError(field, "more than %d entries", l.MaxTags)
	}
	for _, v := range vs {
		if v == "" || len(v) > l.MaxTagBytes || !utf8.ValidString(v) {
			return FieldError(field, "entry %q must be 1 to %d bytes of UTF-8", v, l.MaxTagBytes)
		}
	}
	return nil
}

func (l Limits) validateMetadata(md map[string]string) error {
	n := 0
	for k, v := range md {
		if k == "" || !utf8.ValidString(k) || !utf8.ValidString(v) {
			return FieldError("metadata", "keys must be non-empty UTF-8 and values UTF-8")
		}
		n += len(k) + len(v)
	}
	if n > l.MaxMetadataBytes {
		return FieldError("metadata", "larger than %d bytes", l.MaxMetadataBytes)
	}
	return nil
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxTextBytes > 0 {
		d.MaxTextBytes = l.MaxTextBytes
	}
	if l.MaxTags > 0 {
		d.MaxTags = l.MaxTags
	}
	if l.MaxTagBytes > 0 {
		d.MaxTagBytes = l.MaxTagBytes
	}
	if l.MaxIDBytes > 0 {
		d.MaxIDBytes = l.MaxIDBytes
	}
	if l.MaxMetadataBytes > 0 {
		d.MaxMetadataBytes = l.MaxMetadataBytes
	}
	return d
}
