package consolidation

import (
	"fmt"
	"strings"
	"time"
)

// ExtractFunc turns a message into fact candidates and gate rejections. Extract (rules) is
// the default; an LLM-backed extractor can be plugged in where one is configured, as long
// as its output is decided before a command is proposed (replicas must not call it).
type ExtractFunc func(Message) ([]Candidate, []Rejection)

// Consolidator turns messages into episodes and fact decisions. It is pure: ids come from
// NewID and time from the caller, so running it before proposing a command gives a
// result every replica can apply verbatim.
type Consolidator struct {
	Options Options
	NewID   IDFunc
	Extract ExtractFunc // nil: Extract
}

// Report says what a consolidation did.
type Report struct {
	Messages   int         `json:"messages"` // messages consolidated
	Episodes   []Episode   `json:"episodes,omitempty"`
	Decisions  []Decision  `json:"decisions,omitempty"`
	Rejections []Rejection `json:"rejections,omitempty"`
	// Facts is the user's facts with every decision applied.
	Facts []Fact `json:"-"`
	Ended bool   `json:"ended,omitempty"` // the session was ended (End)
}

// Run consolidates msgs against the user's existing facts at now. Each candidate is decided
// against the facts as updated by the decisions before it, so a fact stated twice in one
// run is added once. On error nothing is returned and nothing should be applied.
func (c Consolidator) Run(msgs []Message, existing []Fact, now time.Time) (Report, error) {
	if err := c.Options.Validate(); err != nil {
		return Report{}, err
	}
	if c.NewID == nil || now.IsZero() {
		return Report{}, fmt.Errorf("%w: consolidate: needs an id function and a time", ErrInvalidInput)
	}
	if err := validateMessages(msgs); err != nil {
		return Report{}, fmt.Errorf("consolidate: %w", err)
	}
	// Each message is extracted once: its candidates are decided below and, with the built-in extraction, tell
	// the episodes' importance which user messages state a fact (a configured extractor leaves importance to run
	// the built-in one).
	extract := c.Extract
	if extract == nil {
		extract = Extract
	}
	cands, rejs := make([][]Candidate, len(msgs)), make([][]Rejection, len(msgs))
	for i, m := range msgs {
		cands[i], rejs[i] = extract(m)
	}
	var facts []bool
	if c.Extract == nil {
		facts = make([]bool, len(msgs))
		for i, m := range msgs {
			facts[i] = m.Role == RoleUser && len(cands[i]) > 0
		}
	}
	eps, err := segment(msgs, c.Options.Segment, facts)
	if err != nil {
		return Report{}, fmt.Errorf("consolidate: %w", err)
	}
	rep := Report{Messages: len(msgs), Episodes: eps, Facts: append([]Fact(nil), existing...)}
	for i := range rep.Episodes {
		rep.Episodes[i].ID = c.NewID(now)
	}
	for i, m := range msgs {
		rep.Rejections = append(rep.Rejections, rejs[i]...)
		if err := rep.decideAll(cands[i], now, c); err != nil {
			return Report{}, fmt.Errorf("consolidate message %q: %w", m.ID, err)
		}
	}
	return rep, nil
}

func (r *Report) decideAll(cands []Candidate, now time.Time, c Consolidator) error {
	for _, cand := range cands {
		d, err := Decide(cand, r.Facts, now, c.NewID, c.Options.Facts)
		if err != nil {
			return err
		}
		r.Decisions = append(r.Decisions, d)
		r.Facts = Apply(r.Facts, d)
	}
	return nil
}

// String is a one-line account, e.g. "consolidated 12 messages: 2 episodes; facts: 1 ADD,
// 1 UPDATE; 3 sentences rejected".
func (r Report) String() string {
	counts := map[Op]int{}
	for _, d := range r.Decisions {
		counts[d.Op]++
	}
	var ops []string
	for _, op := range []Op{OpAdd, OpUpdate, OpDelete, OpNone} {
		if counts[op] > 0 {
			ops = append(ops, fmt.Sprintf("%d %s", counts[op], op))
		}
	}
	if len(ops) == 0 {
		ops = []string{"none"}
	}
	s := fmt.Sprintf("consolidated %d messages: %d episodes; facts: %s; %d sentences rejected",
		r.Messages, len(r.Episodes), strings.Join(ops, ", "), len(r.Rejections))
	if r.Ended {
		s += "; session ended"
	}
	return s
}

// Flush consolidates everything the session has not consolidated yet (folded messages
// waiting in Pending, then the window past the consolidated prefix). The window itself is
// kept. On error the session is unchanged.
func (s *Session) Flush(c Consolidator, existing []Fact, now time.Time) (Report, error) {
	rep, err := c.Run(s.unconsolidated(), existing, now)
	if err != nil {
		return Report{}, fmt.Errorf("flush session %q: %w", s.ID, err)
	}
	s.Pending = nil
	s.Consolidated = len(s.Messages)
	s.LastFlush = now
	return rep, nil
}

// End flushes the session, then clears its window and summary: the conversation is over
// and what was durable in it is now in episodic and semantic memory.
func (s *Session) End(c Consolidator, existing []Fact, now time.Time) (Report, error) {
	rep, err := s.Flush(c, existing, now)
	if err != nil {
		return Report{}, err
	}
	s.Messages, s.Summary, s.Consolidated = nil, "", 0
	rep.Ended = true
	return rep, nil
}
