package consolidation

import (
	"sort"
	"time"
)

// Fact is one semantic memory: a subject–predicate–object triple with its statement,
// bi-temporal validity, provenance and change history. A fact is never rewritten in
// place: an UPDATE ends it (ValidTo, SupersededBy) and adds a new fact; a DELETE ends it;
// a NONE only raises its confidence and extends its provenance and history.
//
// Time axes: ValidFrom is when it became true (when it was stated), RecordedAt when this
// memory learned it, ValidTo when the belief ended (the decision time of the UPDATE or
// DELETE; zero while current). Because a belief ends when the contradiction is recorded,
// ValidTo serves both as the end of validity and as the time the belief was revised.
type Fact struct {
	ID         string    `json:"id"`
	Subject    string    `json:"subject"`
	Predicate  string    `json:"predicate"`
	Object     string    `json:"object"`
	Statement  string    `json:"statement"`
	ValidFrom  time.Time `json:"valid_from"`
	ValidTo    time.Time `json:"valid_to,omitzero"`
	RecordedAt time.Time `json:"recorded_at"`
	// EndedAt is when the memory stopped believing the fact (record time of the supersession or
	// retraction); ValidTo is when it stopped being true (the event's time). Facts written before the two
	// axes were kept apart have only ValidTo, which then serves as both.
	EndedAt time.Time `json:"ended_at,omitzero"`
	// SupersededBy is the id of the fact that replaced this one (UPDATE); empty after a
	// DELETE, which ends a fact without a replacement.
	SupersededBy string  `json:"superseded_by,omitempty"`
	Confidence   float64 `json:"confidence"`
	// Provenance lists the sources (message or call ids) that stated the fact, first
	// first, bounded by FactOptions.MaxProvenance (the first source is always kept).
	Provenance []string `json:"provenance,omitempty"`
	History    []Change `json:"history,omitempty"`
}

// Change is one entry of a fact's history.
type Change struct {
	At         time.Time `json:"at"`
	Op         Op        `json:"op"`
	Source     string    `json:"source,omitempty"`
	Related    string    `json:"related,omitempty"` // the superseded or superseding fact
	Confidence float64   `json:"confidence"`        // after the change
	Reason     string    `json:"reason"`
}

// Current reports whether the fact is believed now.
func (f Fact) Current() bool { return f.ValidTo.IsZero() }

// believedAt reports whether the memory held the fact at t: recorded by t and not ended by t.
func (f Fact) believedAt(t time.Time) bool {
	end := f.EndedAt
	if end.IsZero() {
		end = f.ValidTo
	}
	return !f.RecordedAt.After(t) && (end.IsZero() || end.After(t))
}

// CurrentFacts returns the facts believed now, ordered by id.
func CurrentFacts(facts []Fact) []Fact {
	return filterFacts(facts, Fact.Current)
}

// FactsAsOf answers "what did we believe at t": facts recorded at or before t and not
// superseded or retracted by t, ordered by id.
func FactsAsOf(facts []Fact, t time.Time) []Fact {
	return filterFacts(facts, func(f Fact) bool { return f.believedAt(t) })
}

// TrueAt answers "what do we now know was true at t": facts valid at t by their
// ValidFrom/ValidTo, whenever they were recorded, ordered by id.
func TrueAt(facts []Fact, t time.Time) []Fact {
	return filterFacts(facts, func(f Fact) bool {
		return !f.ValidFrom.After(t) && (f.ValidTo.IsZero() || f.ValidTo.After(t))
	})
}

func filterFacts(facts []Fact, keep func(Fact) bool) []Fact {
	var out []Fact
	for _, f := range facts {
		if keep(f) {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Apply returns a copy of facts with d applied: changed facts replaced by id, the new
// fact appended. facts itself is not modified.
func Apply(facts []Fact, d Decision) []Fact {
	out := make([]Fact, len(facts), len(facts)+1)
	copy(out, facts)
	for _, c := range d.Changed {
		for i := range out {
			if out[i].ID == c.ID {
				out[i] = c
			}
		}
	}
	if d.New != nil {
		out = append(out, *d.New)
	}
	return out
}
