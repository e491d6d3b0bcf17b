package retrieval

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/memory"
)

var planNow = time.Date(2026, 3, 11, 15, 0, 0, 0, time.UTC) // a Wednesday

func TestPlanQueryIntent(t *testing.T) {
	cases := []struct {
		query string
		want  Intent
		mem   []memory.Type
	}{
		{"What is my sister's name?", IntentFactLookup, []memory.Type{memory.Semantic, memory.Episodic}},
		{"Where do I live?", IntentFactLookup, nil},
		{"When is Alice's birthday?", IntentFactLookup, nil},
		{"When did I meet Alice?", IntentRecallEvent, []memory.Type{memory.Episodic, memory.Semantic}},
		{"What did I do last week?", IntentRecallEvent, nil},
		{"Where did we go in March?", IntentRecallEvent, nil},
		{"yesterday", IntentRecallEvent, nil},
		{"Do I like sushi?", IntentPreference, []memory.Type{memory.Semantic, memory.Episodic}},
		{"What's my favourite colour?", IntentPreference, nil},
		{"How did I sleep last night?", IntentMeasure, []memory.Type{memory.Perceptual, memory.Episodic}},
		{"What was my resting heart rate on Monday?", IntentMeasure, nil},
		{"How many steps did I walk yesterday?", IntentMeasure, nil},
		{"How much do I weigh?", IntentMeasure, nil},
		{"Summarize last month", IntentSummary, []memory.Type{memory.Episodic, memory.Semantic, memory.Perceptual}},
		{"How was my week?", IntentSummary, nil},
		{"Hello there", IntentOther, []memory.Type{memory.Semantic, memory.Episodic}},
	}
	for _, c := range cases {
		p := PlanQuery(c.query, planNow, nil)
		if p.Intent != c.want {
			t.Errorf("%q: intent %s (cues %v), want %s", c.query, p.Intent, p.Cues, c.want)
		}
		if c.want != IntentOther && len(p.Cues) == 0 {
			t.Errorf("%q: no cues shown", c.query)
		}
		if c.mem != nil && !slices.Equal(p.Memories, c.mem) {
			t.Errorf("%q: memories %v, want %v", c.query, p.Memories, c.mem)
		}
	}
}

func TestPlanQueryEntitiesTermsAndTime(t *testing.T) {
	known := EntitySet{"alice": true, "new york": true, "project falcon": true, "the": true}
	cases := []struct {
		query    string
		entities []string
		terms    []string
		expr     string
	}{
		{"When did I last see alice in new york?", []string{"alice", "new york"}, []string{"last", "see", "alice", "new", "york"}, ""},
		{"Did Bob call about Project Falcon?", []string{"project falcon", "bob"}, []string{"bob", "call", "project", "falcon"}, ""},
		{"Do you remember what Carol's dog ate on Friday, March 6?", []string{"carol"}, []string{"carol", "dog", "ate"}, "on Friday"},
		{"Tell me about San Francisco last summer", []string{"san francisco"}, []string{"san", "francisco"}, "last summer"},
		{"What did I do last week?", nil, nil, "last week"},
	}
	for _, c := range cases {
		p := PlanQuery(c.query, planNow, known)
		if !slices.Equal(p.Entities, c.entities) {
			t.Errorf("%q: entities %q, want %q", c.query, p.Entities, c.entities)
		}
		if !slices.Equal(p.Terms, c.terms) {
			t.Errorf("%q: terms %q, want %q", c.query, p.Terms, c.terms)
		}
		switch {
		case c.expr == "" && p.Time != nil:
			t.Errorf("%q: unexpected time %+v", c.query, *p.Time)
		case c.expr != "" && (p.Time == nil || p.Time.Expr != c.expr):
			t.Errorf("%q: time %+v, want %q", c.query, p.Time, c.expr)
		}
	}
	// The plan's range is the one ParseTimeRange gives, in now's location.
	p := PlanQuery("What did I do last week?", planNow, nil)
	if want, _ := ParseTimeRange("last week", planNow, nil); p.Time.From != want.From || p.Time.To != want.To {
		t.Fatalf("time %+v, want %+v", p.Time, want)
	}
	// A func works as KnownEntities.
	p = PlanQuery("how is grandma doing", planNow, EntityFunc(func(k string) bool { return k == "grandma" }))
	if !slices.Equal(p.Entities, []string{"grandma"}) {
		t.Fatalf("entities %q", p.Entities)
	}
}

func TestPlanQueryRunReadsWorkingFirst(t *testing.T) {
	p := PlanQuery("What did I do yesterday?", planNow, nil)
	if p.Working || slices.Contains(p.Memories, memory.Working) {
		t.Fatal("working memory without a run")
	}
	if q := p.WithRun(""); !reflect.DeepEqual(q, p) {
		t.Fatal("an empty run id changed the plan")
	}
	r := p.WithRun("run-7")
	want := []memory.Type{memory.Working, memory.Episodic, memory.Semantic}
	if !r.Working || r.RunID != "run-7" || !slices.Equal(r.Memories, want) {
		t.Fatalf("with run: %+v", r)
	}
	if again := r.WithRun("run-7"); !slices.Equal(again.Memories, want) {
		t.Fatalf("WithRun twice: %v", again.Memories)
	}
	if slices.Contains(p.Memories, memory.Working) {
		t.Fatal("WithRun changed the original plan")
	}
}

func TestPlanQueryExplainAndPurity(t *testing.T) {
	known := EntitySet{"alice": true}
	a := PlanQuery("When did I see Alice last week?", planNow, known).WithRun("r1")
	b := PlanQuery("When did I see Alice last week?", planNow, known).WithRun("r1")
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same inputs, different plans")
	}
	s := a.String()
	for _, want := range []string{"intent: recall_event (cues: did i, when did)", "entities: alice", `time: "last week" = 2026-03-02T00:00:00Z .. 2026-03-09T00:00:00Z`, "read: working, episodic, semantic (run r1)"} {
		if !strings.Contains(s, want) {
			t.Errorf("explain lacks %q:\n%s", want, s)
		}
	}
	raw, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var back QueryPlan
	if err := json.Unmarshal(raw, &back); err != nil || back.Intent != a.Intent || back.Time == nil || !back.Time.From.Equal(a.Time.From) || !back.Working {
		t.Fatalf("JSON round trip: %s -> %+v (%v)", raw, back, err)
	}
	if !strings.Contains(PlanQuery("hello", planNow, nil).String(), "time: none") {
		t.Fatal("no time shown as none")
	}
}
