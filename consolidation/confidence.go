package consolidation

import (
	"math"
	"time"
)

// FactOptions configure the decision policy and the confidence rules.
//
// Confidence rules (all results rounded to 3 decimals, capped at MaxConfidence):
//
//   - a new fact starts at InitialConfidence, or ExplicitConfidence when the user asked
//     to remember it;
//   - repetition: the same fact stated again by a new source moves confidence toward 1 by
//     RepeatGain: c ← c + (1−c)·RepeatGain. A source already in the provenance counts
//     once, so replays and retries change nothing;
//   - explicit confirmation (a "remember" restating it) uses ConfirmGain instead;
//   - consistency: a value that supersedes another starts lower when the predicate keeps
//     changing: minus ChurnPenalty per supersession within ChurnWindow beyond the
//     first, floored at MinConfidence.
type FactOptions struct {
	InitialConfidence  float64 // default 0.6
	ExplicitConfidence float64 // default 0.9
	RepeatGain         float64 // default 0.2
	ConfirmGain        float64 // default 0.5
	ChurnPenalty       float64 // default 0.1
	// ChurnWindow is how far back supersessions count against a new value. Default 7 days.
	ChurnWindow   time.Duration
	MinConfidence float64 // default 0.3
	MaxConfidence float64 // default 0.99
	// MultiValued lists predicates that hold several values at once; every other
	// predicate is single-valued (a new value supersedes the old). Default: likes,
	// dislikes, prefers, speaks, allergic_to, is_a, note, pattern.
	MultiValued []string
	// MaxProvenance and MaxHistory bound a fact's lists; the first entry is always
	// kept, then the most recent. Defaults 16 and 32.
	MaxProvenance int
	MaxHistory    int
}

var defaultMultiValued = []string{PredLikes, PredDislikes, PredPrefers, PredSpeaks, PredAllergicTo, PredIsA, PredHas, PredNote, PredPattern}

func (o FactOptions) withDefaults() FactOptions {
	defFloat(&o.InitialConfidence, 0.6)
	defFloat(&o.ExplicitConfidence, 0.9)
	defFloat(&o.RepeatGain, 0.2)
	defFloat(&o.ConfirmGain, 0.5)
	defFloat(&o.ChurnPenalty, 0.1)
	defDur(&o.ChurnWindow, 7*24*time.Hour)
	defFloat(&o.MinConfidence, 0.3)
	defFloat(&o.MaxConfidence, 0.99)
	if o.MultiValued == nil {
		o.MultiValued = defaultMultiValued
	}
	defInt(&o.MaxProvenance, 16)
	defInt(&o.MaxHistory, 32)
	return o
}

// Validate checks the options.
func (o FactOptions) Validate() error {
	var c check
	for _, f := range []struct {
		name string
		v    float64
	}{{"facts.initial_confidence", o.InitialConfidence}, {"facts.explicit_confidence", o.ExplicitConfidence},
		{"facts.repeat_gain", o.RepeatGain}, {"facts.confirm_gain", o.ConfirmGain},
		{"facts.churn_penalty", o.ChurnPenalty}, {"facts.min_confidence", o.MinConfidence},
		{"facts.max_confidence", o.MaxConfidence}} {
		c.unit(f.name, f.v)
	}
	c.nonNegDur("facts.churn_window", o.ChurnWindow)
	c.nonNeg("facts.max_provenance", float64(o.MaxProvenance))
	c.nonNeg("facts.max_history", float64(o.MaxHistory))
	d := o.withDefaults()
	c.cond(d.MinConfidence <= d.InitialConfidence && d.InitialConfidence <= d.MaxConfidence &&
		d.ExplicitConfidence <= d.MaxConfidence, "facts confidences must satisfy min ≤ initial ≤ max and explicit ≤ max")
	c.cond(d.MaxProvenance >= 2 && d.MaxHistory >= 2, "facts.max_provenance and facts.max_history must be at least 2")
	return c.err
}

func (o FactOptions) multiValued(pred string) bool { return contains(o.MultiValued, pred) }

func (o FactOptions) initial(explicit bool) float64 {
	if explicit {
		return o.ExplicitConfidence
	}
	return o.InitialConfidence
}

func (o FactOptions) raise(c, gain float64) float64 {
	return round3(math.Min(o.MaxConfidence, c+(1-c)*gain))
}

// afterChurn lowers a superseding value's confidence by the changes beyond the first.
func (o FactOptions) afterChurn(c float64, changes int) (float64, int) {
	extra := changes - 1
	if extra <= 0 {
		return round3(c), 0
	}
	return round3(math.Max(o.MinConfidence, c-float64(extra)*o.ChurnPenalty)), extra
}

func (o FactOptions) appendProvenance(p []string, src string) []string {
	if src == "" || contains(p, src) {
		return p
	}
	return keepFirstAndLast(append(p, src), o.MaxProvenance)
}

func (o FactOptions) appendHistory(h []Change, c Change) []Change {
	return keepFirstAndLast(append(h, c), o.MaxHistory)
}

// keepFirstAndLast bounds xs to n entries: the first (the origin) and the n−1 latest.
func keepFirstAndLast[T any](xs []T, n int) []T {
	if len(xs) <= n {
		return xs
	}
	return append(xs[:1:1], xs[len(xs)-(n-1):]...)
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
