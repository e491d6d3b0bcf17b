package tiering

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memcluster/memcluster/memory"
)

// Group is one future segment: memories of one user, class, type, scope and calendar month (UTC) of their
// OccurredAt, and one signal for the perceptual class. Retired facts are grouped by concept instead of month
// (ConceptOf): the segment is a snapshot of that concept's retired subgraph. Scope is part of the partition so
// that an archive entry never mixes private text into what a group session may see.
type Group struct {
	UserID string      `json:"user_id"`
	Class  Class       `json:"class"`
	Type   memory.Type `json:"type"`
	Signal string      `json:"signal,omitempty"`
	// Concept is a semantic group's concept (ConceptOf); its Month is then zero.
	Concept string       `json:"concept,omitempty"`
	Scope   memory.Scope `json:"scope"` // private (also for memories with an empty scope) or shared
	Month   time.Time    `json:"month"` // first instant of the month, UTC
	// Reason says why the group left the hot tier, for its archive entry.
	Reason string `json:"reason"`
	// Part numbers the groups of one partition and month from 0, when it has more than MaxItems items.
	Part int `json:"part"`
	// Items are sorted by OccurredAt, then ID.
	Items []memory.Memory `json:"items"`
}

// Meta describes the group's segment.
func (g Group) Meta() SegmentMeta {
	return SegmentMeta{UserID: g.UserID, Class: g.Class, Type: g.Type, Signal: g.Signal,
		From: g.Items[0].OccurredAt, To: g.Items[len(g.Items)-1].OccurredAt}
}

// groupKey is a partition: everything of a Group but its part and items.
type groupKey struct {
	user    string
	class   Class
	signal  string
	concept string
	typ     memory.Type
	scope   memory.Scope
	month   time.Time
}

func keyOf(m *memory.Memory, c Class) groupKey {
	k := groupKey{user: m.UserID, class: c, typ: m.Type, scope: memory.Private}
	if m.IsShared() {
		k.scope = memory.Shared
	}
	if c == ClassPerceptual {
		k.signal = m.Metadata[MetaSignal]
	}
	if c == ClassSemantic {
		if k.concept = ConceptOf(m); k.concept != "" {
			return k
		}
	}
	t := m.OccurredAt.UTC()
	k.month = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	return k
}

func (a groupKey) compare(b groupKey) int {
	return cmp.Or(cmp.Compare(a.user, b.user), cmp.Compare(a.class, b.class), cmp.Compare(a.signal, b.signal),
		cmp.Compare(a.concept, b.concept), cmp.Compare(a.typ, b.typ), cmp.Compare(a.scope, b.scope),
		a.month.Compare(b.month))
}

// ConceptOf is the concept a fact's memory belongs to: its subject, or for a fact about the user the
// relation ("user.lives_in"), so that the successive values of one relation are archived together. Empty
// for a semantic memory that mirrors no fact.
func ConceptOf(m *memory.Memory) string {
	subj, pred := strings.ToLower(m.Metadata["subject"]), m.Metadata["predicate"]
	switch {
	case subj == "":
		return ""
	case subj == "user" && pred != "":
		return "user." + pred
	}
	return subj
}

// reason words why a group of class c left the hot tier under p.
func (p *Policy) reason(c Class, items []memory.Memory) string {
	hot := map[Class]time.Duration{ClassEpisodic: p.o.EpisodicHotFor, ClassPerceptual: p.o.PerceptualHotFor,
		ClassSemantic: p.o.RetiredFactHotFor}[c]
	if p.o.OlderThan > 0 {
		hot = p.o.OlderThan
	}
	age := fmtAge(hot)
	if c == ClassSemantic {
		st := uniform(items, func(m *memory.Memory) string { return m.Metadata[memory.MetaFactStatus] })
		if st == "" {
			st = "superseded or retracted"
		}
		return fmt.Sprintf("%s facts recorded more than %s ago", st, age)
	}
	return fmt.Sprintf("%s memories older than %s", c, age)
}

func fmtAge(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}

// Select returns the memories of ms that leave the hot tier at now, grouped: one group per partition and
// month, split into parts of at most MaxItems. The result depends only on the inputs (not on their order):
// groups sorted by user, class, signal, type, scope, month and part; items by OccurredAt, then ID. A memory
// that appears twice (same user and id) is taken once, in its first form. access is keyed by memory id; a missing entry means
// no recorded reads.
func (p *Policy) Select(ms []memory.Memory, access map[string]AccessStat, now time.Time) []Group {
	parts := map[groupKey][]memory.Memory{}
	seen := map[[2]string]bool{}
	for i := range ms {
		m := &ms[i]
		id := [2]string{m.UserID, m.ID}
		if seen[id] {
			continue
		}
		if ok, _ := p.Decide(m, access[m.ID], now); !ok {
			continue
		}
		seen[id] = true
		c, _ := ClassOf(m)
		k := keyOf(m, c)
		parts[k] = append(parts[k], *m)
	}
	keys := make([]groupKey, 0, len(parts))
	for k := range parts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, groupKey.compare)
	var out []Group
	for _, k := range keys {
		out = append(out, p.split(k, parts[k])...)
	}
	return out
}

func (p *Policy) split(k groupKey, items []memory.Memory) []Group {
	slices.SortFunc(items, func(a, b memory.Memory) int {
		return cmp.Or(a.OccurredAt.Compare(b.OccurredAt), cmp.Compare(a.ID, b.ID))
	})
	var out []Group
	for part := 0; len(items) > 0; part++ {
		n := min(len(items), p.o.MaxItems)
		out = append(out, Group{UserID: k.user, Class: k.class, Type: k.typ, Signal: k.signal, Concept: k.concept,
			Scope: k.scope, Month: k.month, Part: part, Items: items[:n:n], Reason: p.reason(k.class, items[:n:n])})
		items = items[n:]
	}
	return out
}
