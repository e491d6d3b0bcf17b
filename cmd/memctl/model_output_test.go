package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
)

// squeeze drops column padding so tests compare cells, not widths.
func squeeze(s string) string { return regexp.MustCompile(` {2,}`).ReplaceAllString(s, " ") }

func lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

func TestPrintConsolidation(t *testing.T) {
	res := apiv1.ConsolidationResult{
		Episodes: []memory.Memory{{ID: "E1", Text: "User moved\nto Berlin"}},
		Facts: []apiv1.FactDecision{
			{Decision: "ADD", Fact: &apiv1.Fact{ID: "F2", Statement: "user lives in Berlin"}, Reason: "new fact"},
			{Decision: "UPDATE", Fact: &apiv1.Fact{ID: "F3", Statement: "user lives in Paris"}, Target: "F2", Reason: "newer value"},
			{Decision: "DELETE", Target: "F3", Reason: "retracted"},
			{Decision: "NONE", Reason: "nothing to retract"},
		},
		Rejected: []apiv1.Rejected{{Sentence: "I'm tired today", Reason: "transient"}},
	}
	var b bytes.Buffer
	if err := printConsolidation(&b, res); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"episode E1 User moved to Berlin",
		"ADD F2 user lives in Berlin (new fact)",
		"UPDATE F3 user lives in Paris (newer value; target F2)",
		"DELETE F3 - (retracted)",
		"NONE - - (nothing to retract)",
		"rejected - I'm tired today (transient)",
	}
	got := lines(squeeze(b.String()))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	b.Reset()
	_ = printConsolidation(&b, apiv1.ConsolidationResult{Messages: 2})
	if b.String() != "nothing consolidated (2 messages)\n" {
		t.Errorf("empty: %q", b.String())
	}
	b.Reset()
	_ = printConsolidation(&b, apiv1.ConsolidationResult{RunID: "r1", Ended: true})
	if b.String() != "nothing consolidated (0 messages)\nsession r1 ended\n" {
		t.Errorf("empty end: %q", b.String())
	}
	res.Ended, res.RunID = true, "r1"
	b.Reset()
	_ = printConsolidation(&b, res)
	if !strings.HasSuffix(b.String(), ")\nsession r1 ended\n") {
		t.Errorf("end:\n%s", b.String())
	}
}

func TestPrintSessionLine(t *testing.T) {
	st := apiv1.SessionState{RunID: "r1", Window: make([]apiv1.Message, 12), Tokens: 340}
	var b bytes.Buffer
	_ = printSessionLine(&b, st)
	if b.String() != "session r1: 12 messages in window, ~340 tokens, 0 pending\n" {
		t.Errorf("got %q", b.String())
	}
	st.Pending, st.FlushDue = 60, true
	b.Reset()
	_ = printSessionLine(&b, st)
	if !strings.HasSuffix(b.String(), ", 60 pending, flush due\n") {
		t.Errorf("got %q", b.String())
	}
}

func TestPrintSession(t *testing.T) {
	st := apiv1.SessionState{UserID: "u", RunID: "r", Tokens: 9, LastActive: at,
		Window: []apiv1.Message{{Role: "user", Text: "hi\nthere", Time: &at}, {Role: "tool", Text: "ok", TaskEnd: true}}}
	var b bytes.Buffer
	if err := printSession(&b, st); err != nil {
		t.Fatal(err)
	}
	out := squeeze(b.String())
	for _, w := range []string{"run_id: r\n", "tokens: ~9\n", "summary: -\n", "window: 2 messages\n",
		" 2025-01-02T03:04:05Z user hi there\n", " - tool ok [task end]\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("missing %q in:\n%s", w, out)
		}
	}
}

func TestPrintFactsAndHistory(t *testing.T) {
	var b bytes.Buffer
	_ = printFacts(&b, []apiv1.Fact{{ID: "F1", Status: "current", Confidence: 0.6, Statement: "user likes tea"}})
	if got := lines(squeeze(b.String())); len(got) != 2 || got[0] != "ID STATUS CONFIDENCE STATEMENT" || got[1] != "F1 current 0.600 user likes tea" {
		t.Errorf("facts:\n%s", b.String())
	}
	b.Reset()
	_ = printFacts(&b, nil)
	if b.String() != "no facts\n" {
		t.Errorf("no facts: %q", b.String())
	}

	// before/after arrive as generic JSON, as the client decodes them.
	var evs []apiv1.HistoryEvent
	raw := `[{"memory_id":"F1","op":"ADD","time":"2025-01-02T03:04:05Z","after":{"statement":"user likes tea"},"cause":"flush: new"},
		{"memory_id":"F1","op":"DELETE","time":"2025-01-02T03:04:05Z","before":{"statement":"user likes tea"},"cause":"remember: retract"},
		{"memory_id":"E1","op":"ADD","time":"2025-01-02T03:04:05Z","after":{"text":"an episode","type":"episodic"},"cause":"end: episode"},
		{"memory_id":"X","op":"NONE","time":"2025-01-02T03:04:05Z","cause":"c"}]`
	if err := json.Unmarshal([]byte(raw), &evs); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	_ = printHistory(&b, evs)
	got := lines(squeeze(b.String()))
	want := []string{"TIME OP MEMORY TEXT CAUSE",
		"2025-01-02T03:04:05Z ADD F1 user likes tea flush: new",
		"2025-01-02T03:04:05Z DELETE F1 user likes tea remember: retract",
		"2025-01-02T03:04:05Z ADD E1 an episode end: episode",
		"2025-01-02T03:04:05Z NONE X - c"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("history:\n%s", b.String())
	}
}

func TestPrintSignalsAndAggregates(t *testing.T) {
	var b bytes.Buffer
	_ = printSignals(&b, apiv1.SignalsResponse{Signal: "hr", Stored: 1,
		Anomalies: []memory.Memory{{ID: "A1", OccurredAt: at, Text: "heart rate unusually high"}}})
	got := lines(squeeze(b.String()))
	if len(got) != 2 || got[0] != "stored 1 sample of hr, 1 anomaly episode" || got[1] != "anomaly A1 2025-01-02T03:04:05Z heart rate unusually high" {
		t.Errorf("signals:\n%s", b.String())
	}
	b.Reset()
	_ = printAggregates(&b, apiv1.AggregatesResponse{Signal: "hr", Days: []apiv1.DailyAggregate{{Day: at, Count: 3, Min: 60, Max: 80.25, Mean: 70, P50: 70}}})
	if got := lines(squeeze(b.String())); len(got) != 2 || got[1] != "2025-01-02 3 60 80.25 70 70" {
		t.Errorf("aggregates:\n%s", b.String())
	}
	b.Reset()
	_ = printAggregates(&b, apiv1.AggregatesResponse{Signal: "hr"})
	if b.String() != "no samples of hr\n" {
		t.Errorf("empty aggregates %q", b.String())
	}
}

func TestPrintPatternsAndGraph(t *testing.T) {
	res := apiv1.ConsolidateResponse{Episodes: 5,
		Patterns: []apiv1.Pattern{{Key: "booked+flight", Status: "promoted", Support: 3, Confidence: 0.6, Statement: "recurring: booked flight"}},
		Facts:    []apiv1.FactDecision{{Decision: "ADD", Fact: &apiv1.Fact{ID: "F1", Statement: "recurring: booked flight"}, Reason: "new"}}}
	var b bytes.Buffer
	_ = printPatterns(&b, res, res.Episodes)
	want := []string{"considered 5 episodes: 1 pattern, 1 fact decision",
		"pattern booked+flight promoted support 3 confidence 0.600 recurring: booked flight",
		"ADD F1 recurring: booked flight (new)"}
	if got := lines(squeeze(b.String())); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("patterns:\n%s", b.String())
	}
	b.Reset()
	_ = printPatterns(&b, res, -1)
	if strings.HasPrefix(b.String(), "considered") {
		t.Errorf("correction with a header:\n%s", b.String())
	}

	b.Reset()
	_ = printGraph(&b, apiv1.GraphResponse{Nodes: []apiv1.GraphNode{{ID: "user"}, {ID: "Berlin", Hops: 1}},
		Edges: []apiv1.GraphEdge{{From: "user", To: "Berlin", Predicate: "lives_in", FactID: "F1", Confidence: 0.6}}})
	out := squeeze(b.String())
	for _, w := range []string{"NODE HOPS\nuser 0\nBerlin 1\n\n", "FROM PREDICATE TO CONFIDENCE FACT\nuser lives_in Berlin 0.600 F1\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("graph lacks %q:\n%s", w, out)
		}
	}
	b.Reset()
	_ = printGraph(&b, apiv1.GraphResponse{})
	if b.String() != "no nodes\n" {
		t.Errorf("empty graph %q", b.String())
	}
}
