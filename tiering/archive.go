package tiering

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/memcluster/memcluster/memory"
)

// ArchiveEntry is what stays hot of a tiered group: a searchable summary and enough to find, verify and
// rehydrate the items of its segment.
type ArchiveEntry struct {
	UserID  string       `json:"user_id"`
	Class   Class        `json:"class"`
	Type    memory.Type  `json:"type"`
	Signal  string       `json:"signal,omitempty"`
	Concept string       `json:"concept,omitempty"` // a semantic archive's concept (ConceptOf)
	Reason  string       `json:"reason"`            // why its items left the hot tier
	Scope   memory.Scope `json:"scope"`
	AgentID string       `json:"agent_id,omitempty"` // set when every item has this agent id
	RunID   string       `json:"run_id,omitempty"`   // set when every item has this run id
	// From and To bound the items' OccurredAt.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Summary is extractive: the most informative sentences of the items, at most ArchiveOptions.SummaryChars.
	Summary    string   `json:"summary"`
	Tags       []string `json:"tags,omitempty"`     // the most frequent tags of the items
	Entities   []string `json:"entities,omitempty"` // the most frequent entities of the items
	Importance float64  `json:"importance"`         // the highest importance among the items
	// FactStatus is set for a semantic archive: the items' fact status if they share one, else "retired".
	FactStatus string   `json:"fact_status,omitempty"`
	Count      int      `json:"count"`
	ItemIDs    []string `json:"item_ids"`
	SegmentKey string   `json:"segment_key"`
	Checksum   uint64   `json:"checksum"`
}

// ArchiveOptions shape an archive entry. Zero fields take the defaults named beside them.
type ArchiveOptions struct {
	SummaryChars int // summary length bound in characters (runes); default 400
	TopTags      int // tags kept; default 10
	TopEntities  int // entities kept; default 10
}

func (o ArchiveOptions) withDefaults() ArchiveOptions {
	if o.SummaryChars <= 0 {
		o.SummaryChars = 400
	}
	if o.TopTags <= 0 {
		o.TopTags = 10
	}
	if o.TopEntities <= 0 {
		o.TopEntities = 10
	}
	return o
}

// Metadata values of an archive entry's hot record.
const (
	// TierArchive is Metadata["tier"] of an archive entry's record.
	TierArchive = "archive"
	// statusRetired is the fact status of a semantic archive whose items had different retired statuses.
	statusRetired = "retired"
)

// NewArchiveEntry describes group g, whose segment was stored under key with the given checksum. It is
// deterministic: the same group gives the same entry.
func NewArchiveEntry(g Group, key string, checksum uint64, o ArchiveOptions) ArchiveEntry {
	o = o.withDefaults()
	meta := g.Meta()
	e := ArchiveEntry{UserID: g.UserID, Class: g.Class, Type: g.Type, Signal: g.Signal, Concept: g.Concept,
		Reason: g.Reason, Scope: g.Scope,
		From: meta.From, To: meta.To, Count: len(g.Items), SegmentKey: key, Checksum: checksum,
		Summary:  summarize(g.Items, o.SummaryChars),
		Tags:     topN(g.Items, func(m *memory.Memory) []string { return m.Tags }, o.TopTags),
		Entities: topN(g.Items, func(m *memory.Memory) []string { return m.Entities }, o.TopEntities),
		AgentID:  uniform(g.Items, func(m *memory.Memory) string { return m.AgentID }),
		RunID:    uniform(g.Items, func(m *memory.Memory) string { return m.RunID }),
	}
	if e.Summary == "" { // no item had a sentence with a content word
		e.Summary = fmt.Sprintf("%d %s memories from %s to %s", e.Count, g.Class,
			e.From.UTC().Format(time.DateOnly), e.To.UTC().Format(time.DateOnly))
	}
	for i := range g.Items {
		e.ItemIDs = append(e.ItemIDs, g.Items[i].ID)
		e.Importance = max(e.Importance, g.Items[i].Importance)
	}
	if g.Class == ClassSemantic {
		e.FactStatus = uniform(g.Items, func(m *memory.Memory) string { return m.Metadata[memory.MetaFactStatus] })
		if e.FactStatus == "" || e.FactStatus == "current" {
			e.FactStatus = statusRetired
		}
	}
	return e
}

// Memory is the hot-tier record of the archive entry, so the indexes search it like any memory: its text is
// the summary, it occurred when the group starts, and its metadata names the segment:
//
//	tier=archive, segment=<key>, format=<segment format version>, items=<count>, from=<RFC 3339>,
//	to=<RFC 3339>, checksum=<16 hex digits>, class=<class>, reason=<why it left the hot tier>,
//	signal=<signal> (perceptual with a signal), concept=<concept>, fact_status=<status> (semantic)
//
// A semantic archive carries its items' retired fact status, so searches leave it out unless asked for
// retired facts, as they did its items. The embedding is left to the caller.
func (e ArchiveEntry) Memory(id string, now time.Time) memory.Memory {
	md := map[string]string{
		MetaTier:   TierArchive,
		"segment":  e.SegmentKey,
		"items":    strconv.Itoa(e.Count),
		"from":     e.From.UTC().Format(time.RFC3339Nano),
		"to":       e.To.UTC().Format(time.RFC3339Nano),
		"checksum": fmt.Sprintf("%016x", e.Checksum),
		"class":    string(e.Class),
		"format":   strconv.Itoa(segmentVersion),
	}
	if e.Reason != "" {
		md["reason"] = e.Reason
	}
	if e.Concept != "" {
		md["concept"] = e.Concept
	}
	if e.Signal != "" {
		md[MetaSignal] = e.Signal
	}
	if e.FactStatus != "" {
		md[memory.MetaFactStatus] = e.FactStatus
	}
	return memory.Memory{ID: id, UserID: e.UserID, AgentID: e.AgentID, RunID: e.RunID, Type: e.Type,
		Text: e.Summary, OccurredAt: e.From, CreatedAt: now, Tags: slices.Clone(e.Tags),
		Entities: slices.Clone(e.Entities), Importance: e.Importance, Metadata: md, Scope: e.Scope}
}

// topN returns the n values of list that occur in the most items, ties in lexical order.
func topN(items []memory.Memory, list func(*memory.Memory) []string, n int) []string {
	count := map[string]int{}
	for i := range items {
		seen := map[string]bool{}
		for _, v := range list(&items[i]) {
			if !seen[v] {
				seen[v] = true
				count[v]++
			}
		}
	}
	vals := make([]string, 0, len(count))
	for v := range count {
		vals = append(vals, v)
	}
	slices.SortFunc(vals, func(a, b string) int { return cmp.Or(cmp.Compare(count[b], count[a]), cmp.Compare(a, b)) })
	if len(vals) > n {
		vals = vals[:n]
	}
	if len(vals) == 0 {
		return nil
	}
	return vals
}

// uniform returns the value every item has, or "".
func uniform(items []memory.Memory, get func(*memory.Memory) string) string {
	if len(items) == 0 {
		return ""
	}
	v := get(&items[0])
	for i := range items[1:] {
		if get(&items[i+1]) != v {
			return ""
		}
	}
	return v
}
