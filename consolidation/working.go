package consolidation

import (
	"fmt"
	"time"
)

// WorkingOptions configure a session's working memory.
type WorkingOptions struct {
	// MaxMessages is the window: the last N messages kept verbatim (a turn is one message,
	// as in the reference's MAX_HISTORY = 20). Default 20.
	MaxMessages int
	// Fold is how many of the oldest messages fold into the rolling summary when the
	// window overflows. Default MaxMessages/2 (the oldest half); at most MaxMessages.
	Fold int
	// MaxSummaryChars bounds the rolling summary, in runes. Default 1200 (~300 tokens).
	MaxSummaryChars int
	// IdleTTL: a session idle this long is expired; the caller ends it. Default 1h.
	IdleTTL time.Duration
	// MaxPending: once this many folded messages wait for consolidation, Append reports
	// FlushDue. Folded messages are never dropped. Default 60 (three windows).
	MaxPending int
	// CharsPerToken is the token estimate's ratio: ~4 characters per token. Default 4.
	CharsPerToken int
}

func (o WorkingOptions) withDefaults() WorkingOptions {
	defInt(&o.MaxMessages, 20)
	defInt(&o.Fold, max(1, o.MaxMessages/2))
	defInt(&o.MaxSummaryChars, 1200)
	defDur(&o.IdleTTL, time.Hour)
	defInt(&o.MaxPending, 60)
	defInt(&o.CharsPerToken, 4)
	return o
}

// Validate checks the options.
func (o WorkingOptions) Validate() error {
	var c check
	c.nonNeg("working.max_messages", float64(o.MaxMessages))
	c.nonNeg("working.fold", float64(o.Fold))
	c.nonNeg("working.max_summary_chars", float64(o.MaxSummaryChars))
	c.nonNegDur("working.idle_ttl", o.IdleTTL)
	c.nonNeg("working.max_pending", float64(o.MaxPending))
	c.nonNeg("working.chars_per_token", float64(o.CharsPerToken))
	o = o.withDefaults()
	c.cond(o.Fold <= o.MaxMessages, "working.fold %d exceeds working.max_messages %d", o.Fold, o.MaxMessages)
	return c.err
}

// Session is one conversation's working memory: a window of recent messages, a rolling
// extractive summary of what fell out of it, and the folded messages still waiting to be
// consolidated into long-term memory. It is plain data (JSON-serialisable) so a state
// machine can hold it; every method takes time as an argument and reads no clock.
type Session struct {
	ID       string    `json:"id"`
	Messages []Message `json:"messages,omitempty"`
	// Summary is the rolling summary of every message folded out of the window.
	Summary string `json:"summary,omitempty"`
	// Folded counts messages folded into Summary over the session's life.
	Folded int `json:"folded,omitempty"`
	// Pending holds folded messages not consolidated yet: compaction must not lose
	// anything durable, so they wait here until the next Flush.
	Pending []Message `json:"pending,omitempty"`
	// Consolidated is how many leading Messages a Flush has already consolidated.
	Consolidated int       `json:"consolidated,omitempty"`
	LastActive   time.Time `json:"last_active"`
	LastFlush    time.Time `json:"last_flush"`
}

// AppendResult says what an Append did.
type AppendResult struct {
	// Folded are the messages moved from the window into the summary (nil if none).
	Folded []Message
	// FlushDue reports that Pending reached WorkingOptions.MaxPending.
	FlushDue bool
}

// Append adds m to the window; on overflow the oldest Fold messages fold into the
// summary. A message time before the previous message's is clamped to it (clocks of
// different nodes may disagree slightly; a session's time never goes backwards).
func (s *Session) Append(m Message, opts WorkingOptions) (AppendResult, error) {
	if err := opts.Validate(); err != nil {
		return AppendResult{}, err
	}
	if err := m.validate(); err != nil {
		return AppendResult{}, fmt.Errorf("append to session %q: %w", s.ID, err)
	}
	o := opts.withDefaults()
	if n := len(s.Messages); n > 0 && m.Time.Before(s.Messages[n-1].Time) {
		m.Time = s.Messages[n-1].Time
	}
	s.Messages = append(s.Messages, m)
	if m.Time.After(s.LastActive) {
		s.LastActive = m.Time
	}
	var res AppendResult
	if len(s.Messages) > o.MaxMessages {
		res.Folded = s.fold(o)
	}
	res.FlushDue = len(s.Pending) >= o.MaxPending
	return res, nil
}

// fold moves the oldest o.Fold messages into the summary and, if they were not
// consolidated yet, into Pending.
func (s *Session) fold(o WorkingOptions) []Message {
	k := min(o.Fold, len(s.Messages))
	out := append([]Message(nil), s.Messages[:k]...)
	if k > s.Consolidated {
		s.Pending = append(s.Pending, out[s.Consolidated:]...)
	}
	s.Consolidated = max(0, s.Consolidated-k)
	s.Messages = append([]Message(nil), s.Messages[k:]...)
	s.Summary = rollSummary(s.Summary, out, o.MaxSummaryChars)
	s.Folded += k
	return out
}

// rollSummary folds "old summary + new messages" into one new summary. Old summary
// sentences compete with the new ones on equal terms; user sentences weigh 1.2 because
// they carry the user's facts and requests, tool output 0.6 because it is mostly detail.
func rollSummary(old string, msgs []Message, maxChars int) string {
	var cands []weighted
	for _, s := range sentences(old) {
		cands = append(cands, weighted{text: s, weight: 1})
	}
	for _, m := range msgs {
		for _, s := range sentences(m.Content) {
			cands = append(cands, weighted{text: s, weight: roleWeight(m.Role)})
		}
	}
	return summarize(cands, maxChars)
}

func roleWeight(r Role) float64 {
	switch r {
	case RoleUser:
		return 1.2
	case RoleTool:
		return 0.6
	}
	return 1
}

// Tokens estimates the session's prompt size: the summary plus every message at
// CharsPerToken characters per token, plus 4 tokens of role framing per message.
func (s *Session) Tokens(opts WorkingOptions) int {
	o := opts.withDefaults()
	n := EstimateTokens(s.Summary, o.CharsPerToken)
	for _, m := range s.Messages {
		n += 4 + EstimateTokens(m.Content, o.CharsPerToken)
	}
	return n
}

// Expired reports whether the session has been idle for IdleTTL or longer at now.
func (s *Session) Expired(now time.Time, opts WorkingOptions) bool {
	o := opts.withDefaults()
	return !s.LastActive.IsZero() && now.Sub(s.LastActive) >= o.IdleTTL
}

// unconsolidated returns the messages a Flush must consolidate: Pending, then the
// window's messages after the Consolidated prefix.
func (s *Session) unconsolidated() []Message {
	out := append([]Message(nil), s.Pending...)
	return append(out, s.Messages[min(s.Consolidated, len(s.Messages)):]...)
}
