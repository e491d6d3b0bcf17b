package tiering_test

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/tiering"
)

func group(items []memory.Memory) tiering.Group {
	c, _ := tiering.ClassOf(&items[0])
	return tiering.Group{UserID: items[0].UserID, Class: c, Type: items[0].Type, Scope: memory.Private,
		Month: time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), Items: items}
}

func TestArchiveSummary(t *testing.T) {
	at := time.Date(2024, 3, 2, 9, 0, 0, 0, time.UTC)
	texts := []string{
		"Planned the kitchen renovation budget with Maya. The tiles are expensive.",
		"Called the contractor about the kitchen renovation schedule. He can start in April!",
		"Bought coffee.",
		"Maya sent three quotes for the kitchen renovation; the cheapest one skips the plumbing.",
		"Watched a film about penguins in the evening, which was lovely and long and had nothing to do with anything else that happened this month at all.",
	}
	var items []memory.Memory
	for i, s := range texts {
		items = append(items, memory.Memory{ID: string(rune('a' + i)), UserID: "u", Type: memory.Episodic, Text: s,
			OccurredAt: at.Add(time.Duration(i) * day), Tags: []string{"home"}, Entities: []string{"Maya"}})
	}
	e := tiering.NewArchiveEntry(group(items), "k", 1, tiering.ArchiveOptions{})
	if n := utf8.RuneCountInString(e.Summary); n > 400 || n < 100 {
		t.Fatalf("summary of %d characters: %q", n, e.Summary)
	}
	if !strings.Contains(e.Summary, "kitchen renovation") {
		t.Fatalf("summary misses the month's main topic: %q", e.Summary)
	}
	// Chosen sentences keep the order they happened in.
	if i, j := strings.Index(e.Summary, "Planned"), strings.Index(e.Summary, "Maya sent"); i >= 0 && j >= 0 && i > j {
		t.Fatalf("sentences out of order: %q", e.Summary)
	}
	short := tiering.NewArchiveEntry(group(items), "k", 1, tiering.ArchiveOptions{SummaryChars: 60})
	if n := utf8.RuneCountInString(short.Summary); n > 60 {
		t.Fatalf("summary of %d characters with a bound of 60: %q", n, short.Summary)
	}
	again := tiering.NewArchiveEntry(group(items), "k", 1, tiering.ArchiveOptions{})
	if !reflect.DeepEqual(e, again) {
		t.Fatal("archive entry is not deterministic")
	}
}

// One sentence longer than the bound is cut at a word, not dropped.
func TestArchiveSummaryLongSentence(t *testing.T) {
	long := strings.Repeat("renovation budget tiles contractor ", 40)
	items := []memory.Memory{{ID: "a", UserID: "u", Type: memory.Episodic, Text: long, OccurredAt: time.Unix(0, 0)}}
	e := tiering.NewArchiveEntry(group(items), "k", 1, tiering.ArchiveOptions{})
	if n := utf8.RuneCountInString(e.Summary); n > 400 || n < 300 || !strings.HasSuffix(e.Summary, "…") {
		t.Fatalf("%d characters: %q", n, e.Summary)
	}
	items[0].Text = "!!! ... ???"
	if e := tiering.NewArchiveEntry(group(items), "k", 1, tiering.ArchiveOptions{}); !strings.HasPrefix(e.Summary, "1 episodic memories") {
		t.Fatalf("summary of text without words: %q", e.Summary)
	}
}

func TestArchiveEntryMemory(t *testing.T) {
	ms := newGen(11, "u-9").memories(40, time.Date(2024, 3, 31, 0, 0, 0, 0, time.UTC), 29*day)
	g := policy(t, tiering.Options{}).Select(ms, nil, now)[0]
	seg, err := tiering.Encode(g.Items, g.Meta())
	if err != nil {
		t.Fatal(err)
	}
	key := tiering.SegmentKey(3, g.Meta(), tiering.SegmentID(seg))
	e := tiering.NewArchiveEntry(g, key, tiering.Checksum(seg), tiering.ArchiveOptions{})
	if e.Count != len(g.Items) || len(e.ItemIDs) != e.Count || e.ItemIDs[0] != g.Items[0].ID {
		t.Fatalf("count %d, ids %d", e.Count, len(e.ItemIDs))
	}
	if len(e.Tags) == 0 || len(e.Tags) > 10 || len(e.Entities) == 0 || len(e.Entities) > 10 {
		t.Fatalf("tags %q entities %q", e.Tags, e.Entities)
	}
	if e.AgentID != "assistant" || e.RunID != "" {
		t.Fatalf("agent %q run %q: want the shared agent and no run", e.AgentID, e.RunID)
	}
	m := e.Memory("01HZ0000000000000000000000", now)
	if err := memory.DefaultLimits.Validate(&m); err != nil {
		t.Fatalf("archive memory fails validation: %v", err)
	}
	wantMD := map[string]string{"tier": "archive", "segment": key, "items": "40", "class": "episodic",
		"from": g.Items[0].OccurredAt.UTC().Format(time.RFC3339Nano),
		"to":   g.Items[39].OccurredAt.UTC().Format(time.RFC3339Nano), "checksum": tiering.SegmentID(seg),
		"format": "1", "reason": "episodic memories older than 90d"}
	if !reflect.DeepEqual(m.Metadata, wantMD) {
		t.Fatalf("metadata %v\nwant %v", m.Metadata, wantMD)
	}
	if m.Type != memory.Episodic || m.Text != e.Summary || !m.OccurredAt.Equal(g.Items[0].OccurredAt) || !m.CreatedAt.Equal(now) {
		t.Fatalf("record %+v", m)
	}
	if _, ok := tiering.ClassOf(&m); ok {
		t.Fatal("an archive record would tier again")
	}
}

// A semantic archive holds retired facts and stays retired, so searches leave it out as they did its items.
func TestArchiveRetiredFacts(t *testing.T) {
	f := func(id, status string) memory.Memory {
		return memory.Memory{ID: id, UserID: "u", Type: memory.Semantic, Text: "User lives in " + id + ".",
			OccurredAt: time.Unix(int64(len(id)), 0), Metadata: map[string]string{"fact_status": status}}
	}
	one := tiering.NewArchiveEntry(group([]memory.Memory{f("a", "superseded"), f("bb", "superseded")}), "k", 1, tiering.ArchiveOptions{})
	mixed := tiering.NewArchiveEntry(group([]memory.Memory{f("a", "superseded"), f("bb", "retracted")}), "k", 1, tiering.ArchiveOptions{})
	for _, c := range []struct {
		e    tiering.ArchiveEntry
		want string
	}{{one, "superseded"}, {mixed, "retired"}} {
		m := c.e.Memory("x", now)
		if m.Metadata["fact_status"] != c.want || !m.Retired() {
			t.Fatalf("fact_status %q, want %q", m.Metadata["fact_status"], c.want)
		}
	}
}
