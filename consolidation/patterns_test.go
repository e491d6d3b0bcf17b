package consolidation

import (
	"fmt"
	"testing"
	"time"
)

func ep(id string, day int, summary string) Episode {
	at := t0.AddDate(0, 0, day)
	return Episode{ID: id, Start: at, End: at.Add(time.Hour), Summary: summary}
}

func flightEpisodes(n int) []Episode {
	cities := []string{"Paris", "Berlin", "Rome", "Vienna", "Madrid", "Oslo", "Prague", "Dublin"}
	var eps []Episode
	for i := 0; i < n; i++ {
		eps = append(eps, ep(fmt.Sprint("e", i), i*7, "Booked a morning flight to "+cities[i%len(cities)]+"."))
	}
	return eps
}

func TestDetectPatternsPromotes(t *testing.T) {
	noise := []Episode{ep("n1", 1, "Fixed the kubernetes memory eviction."), ep("n2", 2, "Baked sourdough bread.")}
	tests := []struct {
		n          int
		status     PatternStatus
		confidence float64
		promoted   int
	}{
		{2, "", 0, 0},           // below MinSupport: nothing proposed
		{3, Promoted, 0.6, 1},   // 3/(3+2) × 1 ≥ 0.55: three consistent episodes make a habit
		{5, Promoted, 0.714, 1}, // 5/(5+2) × 1
	}
	for _, tt := range tests {
		ps, cands, err := DetectPatterns(nil, append(flightEpisodes(tt.n), noise...), nil, t0, PatternOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if tt.status == "" {
			if len(ps) != 0 {
				t.Errorf("n=%d: got patterns %+v", tt.n, ps)
			}
			continue
		}
		if len(ps) != 1 {
			t.Fatalf("n=%d: %d patterns, want 1: %+v", tt.n, len(ps), ps)
		}
		p := ps[0]
		if p.Phrase != "booked morning flight" || p.Status != tt.status || p.Confidence != tt.confidence ||
			p.Support != tt.n || len(cands) != tt.promoted {
			t.Errorf("n=%d: %+v, %d candidates", tt.n, p, len(cands))
		}
		if tt.promoted == 1 && (cands[0].Predicate != PredPattern || cands[0].Object != "booked morning flight" ||
			cands[0].Statement != "user often booked morning flight" || !cands[0].Time.Equal(t0) || cands[0].Source != "pattern:"+p.Key) {
			t.Errorf("candidate %+v", cands[0])
		}
	}
}

func TestPatternCorrections(t *testing.T) {
	ps, _, err := DetectPatterns(nil, flightEpisodes(8), nil, t0, PatternOptions{})
	if err != nil || len(ps) != 1 || ps[0].Status != Promoted {
		t.Fatalf("setup: %+v %v", ps, err)
	}
	// First correction: 0.8 → 0.4, below PromoteAt: demoted, and its fact is retracted.
	p, c, err := CorrectPattern(ps[0], t0, PatternOptions{})
	if err != nil || p.Status != Tentative || p.Confidence != 0.4 || c == nil || c.Polarity != Negative {
		t.Fatalf("first correction: %+v %+v %v", p, c, err)
	}
	// The same evidence again: the correction keeps it below the threshold (0.8 × 0.5).
	ps2, cands, _ := DetectPatterns([]Pattern{p}, flightEpisodes(8), nil, t0.AddDate(0, 0, 1), PatternOptions{})
	if len(ps2) != 1 || ps2[0].Status != Tentative || ps2[0].Key != p.Key || len(cands) != 0 {
		t.Fatalf("after correction: %+v %d", ps2, len(cands))
	}
	// Second correction: retracted for good; no fact to retract (it was not promoted).
	p2, c2, _ := CorrectPattern(ps2[0], t0, PatternOptions{})
	if p2.Status != Retracted || c2 != nil {
		t.Fatalf("second correction: %+v %+v", p2, c2)
	}
	ps3, cands3, _ := DetectPatterns([]Pattern{p2}, flightEpisodes(8), nil, t0.AddDate(0, 0, 2), PatternOptions{})
	if ps3[0].Status != Retracted || len(cands3) != 0 {
		t.Errorf("retracted pattern came back: %+v", ps3[0])
	}
}

func TestPatternsThroughDecide(t *testing.T) {
	_, cands, _ := DetectPatterns(nil, flightEpisodes(5), nil, t0, PatternOptions{})
	d, err := Decide(cands[0], nil, t0, seqIDs(), FactOptions{})
	if err != nil || d.Op != OpAdd {
		t.Fatalf("%+v %v", d, err)
	}
	facts := Apply(nil, d)
	ps, _, _ := DetectPatterns(nil, flightEpisodes(5), nil, t0, PatternOptions{})
	_, retract, _ := CorrectPattern(ps[0], t0.Add(time.Hour), PatternOptions{})
	d2, err := Decide(*retract, facts, t0.Add(time.Hour), seqIDs(), FactOptions{})
	if err != nil || d2.Op != OpDelete || d2.Target != d.New.ID {
		t.Errorf("retraction: %+v %v", d2, err)
	}
}

func TestDetectPatternsDeterministic(t *testing.T) {
	eps := append(flightEpisodes(6), ep("x1", 3, "Ordered sushi for dinner."), ep("x2", 10, "Ordered sushi for lunch."),
		ep("x3", 17, "Ordered sushi again for dinner."))
	rev := make([]Episode, len(eps))
	for i := range eps {
		rev[len(eps)-1-i] = eps[i]
	}
	a, _, _ := DetectPatterns(nil, eps, nil, t0, PatternOptions{})
	b, _, _ := DetectPatterns(nil, rev, nil, t0, PatternOptions{})
	if fmt.Sprint(a) != fmt.Sprint(b) || len(a) != 2 {
		t.Errorf("input order changed the result or clusters are wrong:\n%v\n%v", a, b)
	}
	// An injected similarity is used: one that sees everything as unrelated finds nothing.
	none, _, _ := DetectPatterns(nil, eps, func(a, b string) float64 { return 0 }, t0, PatternOptions{})
	if len(none) != 0 {
		t.Errorf("injected similarity ignored: %v", none)
	}
}
