package retrieval

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/memory"
)

func part(c Confidence, name string) Part {
	for _, p := range c.Parts {
		if p.Name == name {
			return p
		}
	}
	return Part{}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestAssessOptionsValidate(t *testing.T) {
	if err := DefaultAssessOptions().Validate(); err != nil {
		t.Fatal(err)
	}
	d := DefaultAssessOptions()
	if d.Threshold != 0.45 || d.TopN != 3 || !near(d.RelevanceWeight+d.CoverageWeight+d.TemporalWeight+d.AuthorityWeight+d.ConsistencyWeight, 1) {
		t.Fatalf("defaults: %+v", d)
	}
	for name, mut := range map[string]func(*AssessOptions){
		"coverage_weight":  func(o *AssessOptions) { o.CoverageWeight = -0.1 },
		"temporal_weight":  func(o *AssessOptions) { o.TemporalWeight = math.NaN() },
		"relevance_weight": func(o *AssessOptions) { o.RelevanceWeight, o.CoverageWeight = 0, 0 },
		"top_n":            func(o *AssessOptions) { o.TopN = 0 },
		"threshold":        func(o *AssessOptions) { o.Threshold = 1.5 },
	} {
		o := DefaultAssessOptions()
		mut(&o)
		err := o.Validate()
		if !errors.Is(err, memory.ErrInvalid) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: got %v", name, err)
		}
	}
}

func TestAssessFactLookup(t *testing.T) {
	plan := PlanQuery("Where does Alice live?", planNow, EntitySet{"alice": true})
	hits := []Evidence{
		{ID: "f1", Type: memory.Semantic, Text: "Alice lives in Berlin", Score: 0.85, Confidence: 0.9,
			Subject: "alice", Predicate: "lives_in", Object: "Berlin"},
		{ID: "e1", Type: memory.Episodic, Text: "Visited Alice in Berlin", Score: 0.6, Time: planNow.AddDate(0, -1, 0)},
	}
	c := Assess(plan, hits)
	if r := part(c, "relevance"); !near(r.Value, 0.725) || !r.Applies {
		t.Errorf("relevance %+v", r)
	}
	if p := part(c, "coverage"); !near(p.Value, 1) {
		t.Errorf("coverage %+v (plan %v %v)", p, plan.Entities, plan.Terms)
	}
	if p := part(c, "temporal"); p.Applies {
		t.Errorf("temporal applies without a time in the query: %+v", p)
	}
	if p := part(c, "authority"); !near(p.Value, 0.9) {
		t.Errorf("authority %+v", p)
	}
	if p := part(c, "consistency"); p.Applies {
		t.Errorf("consistency applies to one fact: %+v", p)
	}
	want := (0.35*0.725 + 0.25*1 + 0.10*0.9) / 0.70
	if !near(c.Score, want) || c.Escalate {
		t.Fatalf("score %v, want %v; %s", c.Score, want, c)
	}
	if s := c.String(); !strings.Contains(s, "temporal") || !strings.Contains(s, "n/a") {
		t.Fatalf("explain:\n%s", s)
	}
}

func TestAssessTemporalFit(t *testing.T) {
	plan := PlanQuery("What did I do last week?", planNow, nil) // 2026-03-02 .. 2026-03-09
	at := func(d int) time.Time { return time.Date(2026, 3, d, 12, 0, 0, 0, time.UTC) }
	hits := []Evidence{
		{ID: "a", Type: memory.Episodic, Text: "ran by the river", Score: 0.7, Time: at(3)},
		{ID: "b", Type: memory.Episodic, Text: "dinner with Bob", Score: 0.6, Time: at(8)},
		{ID: "c", Type: memory.Episodic, Text: "dentist", Score: 0.5, Time: at(10)},
		{ID: "d", Type: memory.Semantic, Text: "Bob is a friend", Score: 0.4, Confidence: 0.8},
	}
	c := Assess(plan, hits)
	if p := part(c, "temporal"); !p.Applies || !near(p.Value, 2.0/3) {
		t.Fatalf("temporal %+v", p)
	}
	if p := part(c, "coverage"); p.Applies {
		t.Fatalf("coverage applies with no terms: %+v (terms %v)", p, plan.Terms)
	}
	plan.Time = nil
	if p := part(Assess(plan, hits), "temporal"); p.Applies {
		t.Fatal("temporal applies without a range")
	}
}

func TestAssessConsistency(t *testing.T) {
	plan := PlanQuery("Where does Alice live?", planNow, EntitySet{"alice": true})
	fact := func(id, subj, pred, obj, status string) Evidence {
		return Evidence{ID: id, Type: memory.Semantic, Text: subj + " " + pred + " " + obj, Score: 0.8, Confidence: 0.8,
			Subject: subj, Predicate: pred, Object: obj, FactStatus: status}
	}
	cases := []struct {
		name    string
		hits    []Evidence
		applies bool
		value   float64
	}{
		{"contradiction", []Evidence{fact("1", "alice", "lives_in", "Berlin", ""), fact("2", "alice", "lives_in", "Paris", "current")}, true, 0},
		{"one of three contradicted pairs", []Evidence{fact("1", "alice", "lives_in", "Berlin", ""), fact("2", "alice", "lives_in", "Paris", ""),
			fact("3", "alice", "works_at", "Acme", "")}, true, 1.0 / 3},
		{"same object, other spelling", []Evidence{fact("1", "alice", "lives_in", "Berlin", ""), fact("2", "Alice", "lives_in", "berlin", "")}, true, 1},
		{"different subjects", []Evidence{fact("1", "alice", "lives_in", "Berlin", ""), fact("2", "bob", "lives_in", "Paris", "")}, true, 1},
		{"retired fact is history", []Evidence{fact("1", "alice", "lives_in", "Berlin", ""), fact("2", "alice", "lives_in", "Paris", "superseded")}, false, 0},
		{"multi-valued predicate", []Evidence{fact("1", "alice", "likes", "sushi", ""), fact("2", "alice", "likes", "ramen", "")}, false, 0},
	}
	for _, c := range cases {
		got := Assess(plan, c.hits)
		p := part(got, "consistency")
		if p.Applies != c.applies || (c.applies && !near(p.Value, c.value)) {
			t.Errorf("%s: %+v", c.name, p)
		}
	}
	// A retired fact lowers authority: the answer would rest on an old belief.
	got := Assess(plan, cases[4].hits)
	if p := part(got, "authority"); !near(p.Value, 0.4) {
		t.Errorf("authority with a superseded fact: %+v", p)
	}
	// A contradiction pulls the score down.
	if a, b := Assess(plan, cases[0].hits).Score, Assess(plan, cases[3].hits).Score; a >= b {
		t.Errorf("contradicting facts scored %v, agreeing %v", a, b)
	}
}

func TestAssessEscalates(t *testing.T) {
	plan := PlanQuery("What did Carol say about the marathon last week?", planNow, nil)
	if c := Assess(plan, nil); c.Score != 0 || !c.Escalate {
		t.Fatalf("no hits: %s", c)
	}
	weak := []Evidence{
		{ID: "x", Type: memory.Episodic, Text: "bought groceries", Score: 0.2, Time: planNow.AddDate(0, -2, 0)},
		{ID: "y", Type: memory.Episodic, Text: "watered the plants", Score: 0.15, Time: planNow.AddDate(0, -3, 0)},
	}
	c := Assess(plan, weak)
	if !c.Escalate || c.Score >= 0.45 {
		t.Fatalf("weak evidence not escalated: %s", c)
	}
	strong := []Evidence{
		{ID: "z", Type: memory.Episodic, Text: "Carol says the marathon route changed", Score: 0.9, Time: time.Date(2026, 3, 4, 18, 0, 0, 0, time.UTC)},
	}
	if c := Assess(plan, strong); c.Escalate || c.Score < 0.9 {
		t.Fatalf("strong evidence escalated: %s", c)
	}
	// A part with weight 0 is off: only relevance counts here.
	o := DefaultAssessOptions()
	o.CoverageWeight, o.TemporalWeight = 0, 0
	if c := o.Assess(plan, weak); !near(c.Score, 0.175) {
		t.Fatalf("relevance only: %s", c)
	}
}

func TestStemMatchesCommonForms(t *testing.T) {
	for _, pair := range [][2]string{{"lives", "live"}, {"visited", "visits"}, {"loved", "love"}, {"boxes", "box"},
		{"walking", "walks"}, {"sister", "sisters"}} {
		if stem(pair[0]) != stem(pair[1]) {
			t.Errorf("%q -> %q, %q -> %q", pair[0], stem(pair[0]), pair[1], stem(pair[1]))
		}
	}
	if stem("bus") != "bus" || stem("is") != "is" {
		t.Error("short words lost letters")
	}
}
