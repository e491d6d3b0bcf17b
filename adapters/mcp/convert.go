package mcp

import (
	"fmt"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
)

var zeroTime time.Time

// memoryOut is a memory as a tool returns it: what an LLM needs, without embeddings or bookkeeping.
type memoryOut struct {
	ID         string            `json:"id,omitempty"`
	Text       string            `json:"text"`
	Type       string            `json:"type,omitempty"`
	OccurredAt time.Time         `json:"occurredAt,omitzero"`
	Tags       []string          `json:"tags,omitempty"`
	Importance float64           `json:"importance,omitempty"`
	Metadata   map[string]string `json:"metadata,omitempty"`
	Score      float64           `json:"score,omitempty"`
	// The workspace forms (a synced Markdown file's lines), shaped as OpenClaw's memory tools answer.
	Path       string `json:"path,omitempty"`
	StartLine  int    `json:"startLine,omitempty"`
	EndLine    int    `json:"endLine,omitempty"`
	TotalLines int    `json:"totalLines,omitempty"`
	Provider   string `json:"provider,omitempty"`
	Model      string `json:"model,omitempty"`
}

func workspaceHitOut(h apiv1.WorkspaceHit) memoryOut {
	return memoryOut{Path: h.Path, StartLine: h.StartLine, EndLine: h.EndLine, Text: h.Text, Score: h.Score,
		Provider: h.Provider, Model: h.Model}
}

func workspaceLinesOut(l apiv1.WorkspaceLines) memoryOut {
	return memoryOut{Path: l.Path, StartLine: l.StartLine, EndLine: l.EndLine, TotalLines: l.TotalLines, Text: l.Text}
}

// sessionType is the API's session_type for a group conversation, where private memory stays out.
func sessionType(group bool) string {
	if group {
		return "group"
	}
	return ""
}

func toMemoryOut(m memory.Memory) memoryOut {
	return memoryOut{ID: m.ID, Text: m.Text, Type: string(m.Type), OccurredAt: m.OccurredAt, Tags: m.Tags,
		Importance: m.Importance, Metadata: m.Metadata}
}

// factOut is a fact, with the decision that produced it when it comes from remember or a flush.
type factOut struct {
	Decision   string  `json:"decision,omitempty"`
	ID         string  `json:"id"`
	Statement  string  `json:"statement"`
	Confidence float64 `json:"confidence"`
	Status     string  `json:"status"`
}

func toFactOut(f apiv1.Fact, decision string) factOut {
	return factOut{Decision: decision, ID: f.ID, Statement: f.Statement, Confidence: f.Confidence, Status: f.Status}
}

func toRememberOut(res apiv1.ConsolidationResult) rememberOut {
	out := rememberOut{Facts: []factOut{}}
	for _, d := range res.Facts {
		if d.Fact != nil {
			out.Facts = append(out.Facts, toFactOut(*d.Fact, d.Decision))
		}
	}
	for _, r := range res.Rejected {
		out.Rejected = append(out.Rejected, fmt.Sprintf("%s (%s)", r.Sentence, r.Reason))
	}
	return out
}

// optionalTime parses an RFC 3339 argument; empty is nil.
func optionalTime(name, v string) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil, fmt.Errorf("%s: want an RFC 3339 time like 2026-03-02T09:00:00Z, got %q", name, v)
	}
	return &t, nil
}

func deref(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}
