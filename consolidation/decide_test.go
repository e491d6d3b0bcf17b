package consolidation

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestDecideInputs(t *testing.T) {
	c := Candidate{Subject: SubjectUser, Predicate: PredLikes, Object: "tea", Polarity: Positive, Time: t0}
	if _, err := Decide(c, nil, time.Time{}, seqIDs(), FactOptions{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("zero now: %v", err)
	}
	if _, err := Decide(c, nil, t0, nil, FactOptions{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("nil id func: %v", err)
	}
	bad := c
	bad.Polarity = "maybe"
	if _, err := Decide(bad, nil, t0, seqIDs(), FactOptions{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("bad polarity: %v", err)
	}
	if _, err := Decide(c, nil, t0, seqIDs(), FactOptions{RepeatGain: -1}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("bad options: %v", err)
	}
}

func TestDecideDoesNotMutateInput(t *testing.T) {
	ids := seqIDs()
	d, _ := Decide(Candidate{Subject: SubjectUser, Predicate: PredLivesIn, Object: "Rome", Polarity: Positive, Source: "a", Time: t0}, nil, t0, ids, FactOptions{})
	facts := Apply(nil, d)
	before, _ := json.Marshal(facts)
	for _, c := range []Candidate{
		{Subject: SubjectUser, Predicate: PredLivesIn, Object: "Rome", Polarity: Positive, Source: "b", Time: t0},
		{Subject: SubjectUser, Predicate: PredLivesIn, Object: "Oslo", Polarity: Positive, Source: "c", Time: t0},
		{Subject: SubjectUser, Predicate: PredLivesIn, Object: "Rome", Polarity: Negative, Source: "d", Time: t0},
	} {
		if _, err := Decide(c, facts, t0.Add(time.Hour), ids, FactOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if after, _ := json.Marshal(facts); string(after) != string(before) {
		t.Errorf("Decide modified the existing facts:\n%s\n%s", before, after)
	}
}

func TestProvenanceAndHistoryBounded(t *testing.T) {
	ids := seqIDs()
	o := FactOptions{MaxProvenance: 3, MaxHistory: 4}
	var facts []Fact
	for i := 0; i < 10; i++ {
		c := Candidate{Subject: SubjectUser, Predicate: PredLikes, Object: "tea", Polarity: Positive, Source: fmt.Sprint("s", i), Time: t0}
		d, err := Decide(c, facts, t0, ids, o)
		if err != nil {
			t.Fatal(err)
		}
		facts = Apply(facts, d)
	}
	f := facts[0]
	if fmt.Sprint(f.Provenance) != "[s0 s8 s9]" || len(f.History) != 4 || f.History[0].Op != OpAdd {
		t.Errorf("provenance %v, history %d entries starting with %s", f.Provenance, len(f.History), f.History[0].Op)
	}
}

// TestConsolidatorDeterministic: the same inputs give byte-identical reports, as the
// replicas of a Raft group require of anything computed from a command.
func TestConsolidatorDeterministic(t *testing.T) {
	msgs := conv(t0,
		"user: Hi! I live in Berlin and I work at Acme.",
		"assistant: Nice to meet you. How can I help?",
		"user: Book a morning flight to Paris for Friday.",
		"tool!: booking confirmed",
		"assistant: Booked the Friday morning flight to Paris.",
		"+2h user: I moved to Munich last month. I like jazz, tea and hiking.",
		"assistant: Noted.")
	run := func() string {
		rep, err := Consolidator{NewID: seqIDs()}.Run(msgs, nil, t0.Add(3*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(struct {
			R Report
			F []Fact
		}{rep, rep.Facts})
		return string(b)
	}
	first := run()
	for i := 0; i < 5; i++ {
		if run() != first {
			t.Fatalf("run %d differs", i)
		}
	}
	rep, _ := Consolidator{NewID: seqIDs()}.Run(msgs, nil, t0.Add(3*time.Hour))
	if got := rep.String(); got != "consolidated 7 messages: 3 episodes; facts: 5 ADD, 1 UPDATE; 1 sentences rejected" {
		t.Errorf("report %q", got)
	}
}

func TestSupersedeEndsEveryStaleValue(t *testing.T) {
	// Two current values of a single-valued predicate (as data written under another
	// policy could leave): a new value ends both.
	facts := []Fact{
		{ID: "a", Subject: SubjectUser, Predicate: PredLivesIn, Object: "Rome", ValidFrom: t0, RecordedAt: t0, Confidence: 0.6},
		{ID: "b", Subject: SubjectUser, Predicate: PredLivesIn, Object: "Oslo", ValidFrom: t0.Add(time.Hour), RecordedAt: t0, Confidence: 0.6},
	}
	c := Candidate{Subject: SubjectUser, Predicate: PredLivesIn, Object: "Lima", Polarity: Positive, Source: "m", Time: t0.Add(2 * time.Hour)}
	d, err := Decide(c, facts, t0.Add(2*time.Hour), seqIDs(), FactOptions{})
	if err != nil || d.Op != OpUpdate || d.Target != "b" || len(d.Changed) != 2 {
		t.Fatalf("%+v %v", d, err)
	}
	cur := CurrentFacts(Apply(facts, d))
	if len(cur) != 1 || cur[0].Object != "Lima" {
		t.Errorf("current %+v", cur)
	}
}
