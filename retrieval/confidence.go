package retrieval

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/memcluster/memcluster/consolidation"
	"github.com/memcluster/memcluster/memory"
)

// Evidence is one retrieved item as the context pipeline sees it, whatever memory type or tier it came from.
type Evidence struct {
	ID   string      `json:"id"`
	Type memory.Type `json:"type"`
	Text string      `json:"text"`
	// Time is when it happened (an episode's or reading's occurred-at, a fact's valid-from); zero when unknown.
	Time time.Time `json:"time,omitzero"`
	// Score is the retrieval relevance in [0,1] (absolute, like the hybrid score: a relative score where the best
	// hit is always 1 makes the relevance part meaningless).
	Score float64 `json:"score"`
	// Confidence is a fact's belief in [0,1]; 0 when the item is not a fact.
	Confidence float64  `json:"confidence,omitempty"`
	Entities   []string `json:"entities,omitempty"`
	Tier       string   `json:"tier,omitempty"` // "hot" or "cold"
	// FactStatus, Subject, Predicate and Object describe a semantic fact: status "" or "current" is believed now,
	// "superseded" or "retracted" is not. Subject is optional: when both facts have one, only facts about the
	// same subject can contradict each other.
	FactStatus string `json:"fact_status,omitempty"`
	Subject    string `json:"subject,omitempty"`
	Predicate  string `json:"predicate,omitempty"`
	Object     string `json:"object,omitempty"`
}

// current reports whether the evidence is a fact believed now.
func (e *Evidence) current() bool { return e.FactStatus == "" || e.FactStatus == "current" }

// AssessOptions are the weights of Assess's parts and the threshold below which the caller escalates (reads the
// cold tier, widens the query, asks an LLM). Parts that do not apply to a query are left out and the weights of
// the others renormalised, so a query without a time expression is not marked down for it. Zero values are
// values (a 0 weight turns its part off): start from DefaultAssessOptions.
type AssessOptions struct {
	// RelevanceWeight: mean score of the top hits. Default 0.35: the retriever's own judgement carries most.
	RelevanceWeight float64
	// CoverageWeight: share of the plan's entities and terms found in the evidence. Default 0.25.
	CoverageWeight float64
	// TemporalWeight: share of dated evidence inside the plan's time range. Default 0.15.
	TemporalWeight float64
	// AuthorityWeight: mean belief of the semantic evidence. Default 0.10.
	AuthorityWeight float64
	// ConsistencyWeight: share of current facts that no other current fact contradicts. Default 0.15.
	ConsistencyWeight float64
	// TopN is how many of the best hits relevance averages. Default 3.
	TopN int
	// Threshold: a combined score below it means "not confident, escalate". Default 0.45.
	Threshold float64
	// MultiValued are predicates that hold several values at once (likes sushi and likes ramen is no
	// contradiction). Default: the memory model's (consolidation's likes, dislikes, prefers, speaks, allergic_to,
	// is_a, has, note, pattern).
	MultiValued []string
}

// DefaultAssessOptions are the defaults above.
func DefaultAssessOptions() AssessOptions {
	return AssessOptions{RelevanceWeight: 0.35, CoverageWeight: 0.25, TemporalWeight: 0.15, AuthorityWeight: 0.10,
		ConsistencyWeight: 0.15, TopN: 3, Threshold: 0.45, MultiValued: slices.Clone(defaultMultiValued)}
}

var defaultMultiValued = []string{consolidation.PredLikes, consolidation.PredDislikes, consolidation.PredPrefers,
	consolidation.PredSpeaks, consolidation.PredAllergicTo, consolidation.PredIsA, consolidation.PredHas,
	consolidation.PredNote, consolidation.PredPattern}

// Validate checks the options; errors name the field and wrap memory.ErrInvalid.
func (o AssessOptions) Validate() error {
	for _, w := range []struct {
		name string
		v    float64
	}{{"relevance_weight", o.RelevanceWeight}, {"coverage_weight", o.CoverageWeight},
		{"temporal_weight", o.TemporalWeight}, {"authority_weight", o.AuthorityWeight},
		{"consistency_weight", o.ConsistencyWeight}} {
		if w.v < 0 || w.v > 1 || math.IsNaN(w.v) {
			return memory.FieldError(w.name, "must be between 0 and 1, got %v", w.v)
		}
	}
	switch {
	case o.RelevanceWeight+o.CoverageWeight == 0:
		return memory.FieldError("relevance_weight", "relevance and coverage weights must not both be 0 (they always apply)")
	case o.TopN < 1:
		return memory.FieldError("top_n", "must be at least 1, got %d", o.TopN)
	case o.Threshold < 0 || o.Threshold > 1 || math.IsNaN(o.Threshold):
		return memory.FieldError("threshold", "must be between 0 and 1, got %v", o.Threshold)
	}
	return nil
}

// Part is one component of a confidence: its value in [0,1], whether it applied, and why.
type Part struct {
	Name    string  `json:"name"`
	Value   float64 `json:"value"`
	Weight  float64 `json:"weight"`
	Applies bool    `json:"applies"`
	Why     string  `json:"why"`
}

// Confidence is how far the evidence answers the plan: the combined Score in [0,1], its parts, and whether the
// caller should escalate.
type Confidence struct {
	Score     float64 `json:"score"`
	Threshold float64 `json:"threshold"`
	Escalate  bool    `json:"escalate"`
	Parts     []Part  `json:"parts"`
}

// String shows the score and each part, for --explain.
func (c Confidence) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "confidence %.2f (threshold %.2f", c.Score, c.Threshold)
	if c.Escalate {
		b.WriteString(", escalate")
	}
	b.WriteString(")")
	for _, p := range c.Parts {
		if p.Applies {
			fmt.Fprintf(&b, "\n  %-11s %.2f × %.2f  %s", p.Name, p.Value, p.Weight, p.Why)
		} else {
			fmt.Fprintf(&b, "\n  %-11s  n/a         %s", p.Name, p.Why)
		}
	}
	return b.String()
}

// Assess scores hits against plan with DefaultAssessOptions.
func Assess(plan QueryPlan, hits []Evidence) Confidence {
	return DefaultAssessOptions().Assess(plan, hits)
}

// Assess combines the parts: Σ weight·value over the parts that apply, divided by Σ weight over them. No hits
// is confidence 0. Options are assumed valid (Validate).
func (o AssessOptions) Assess(plan QueryPlan, hits []Evidence) Confidence {
	c := Confidence{Threshold: o.Threshold}
	c.Parts = []Part{
		relevancePart(hits, o.TopN),
		coveragePart(plan, hits),
		temporalPart(plan, hits),
		authorityPart(hits),
		consistencyPart(hits, o.MultiValued),
	}
	weights := []float64{o.RelevanceWeight, o.CoverageWeight, o.TemporalWeight, o.AuthorityWeight, o.ConsistencyWeight}
	var sum, wsum float64
	for i := range c.Parts {
		c.Parts[i].Weight = weights[i]
		if c.Parts[i].Applies {
			sum += weights[i] * c.Parts[i].Value
			wsum += weights[i]
		}
	}
	if len(hits) > 0 && wsum > 0 {
		c.Score = clamp01(sum / wsum)
	}
	c.Escalate = c.Score < o.Threshold
	return c
}

func clamp01(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return math.Min(1, math.Max(0, v))
}

// relevancePart is the mean of the best n scores (fewer hits: the mean of those there are).
func relevancePart(hits []Evidence, n int) Part {
	p := Part{Name: "relevance", Applies: true}
	if len(hits) == 0 {
		p.Why = "no evidence"
		return p
	}
	scores := make([]float64, len(hits))
	for i, h := range hits {
		scores[i] = clamp01(h.Score)
	}
	slices.SortFunc(scores, func(a, b float64) int { return cmpDesc(a, b) })
	top := scores[:min(n, len(scores))]
	var s float64
	for _, v := range top {
		s += v
	}
	p.Value = s / float64(len(top))
	p.Why = fmt.Sprintf("mean of top %d scores", len(top))
	return p
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// coveragePart is the share of the plan's entities and content terms (terms inside an entity count once, with
// it) that some evidence mentions, in its text or entities. Words match after a light stemming (plural and
// -ed/-ing endings), so "visited" covers "visit".
func coveragePart(plan QueryPlan, hits []Evidence) Part {
	p := Part{Name: "coverage"}
	var items [][]string
	inEntity := map[string]bool{}
	for _, e := range plan.Entities {
		if toks := nameTokens(e); len(toks) > 0 {
			items = append(items, stems(toks))
			for _, t := range toks {
				inEntity[t] = true
			}
		}
	}
	for _, t := range plan.Terms {
		if !inEntity[t] {
			items = append(items, stems([]string{t}))
		}
	}
	if len(items) == 0 {
		p.Why = "no entities or terms to cover"
		return p
	}
	p.Applies = true
	var texts [][]string
	for _, h := range hits {
		texts = append(texts, stems(nameTokens(h.Text)))
		for _, e := range h.Entities {
			texts = append(texts, stems(nameTokens(e)))
		}
	}
	var found []string
	for _, it := range items {
		if slices.ContainsFunc(texts, func(toks []string) bool { return containsSeq(toks, it) }) {
			found = append(found, strings.Join(it, " "))
		}
	}
	p.Value = float64(len(found)) / float64(len(items))
	p.Why = fmt.Sprintf("%d of %d entities and terms found", len(found), len(items))
	return p
}

func stems(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = stem(t)
	}
	return out
}

// stem strips one common English ending and then a final "e", keeping at least three letters: enough to match
// "lives" to "live" and "visits" to "visited"; a real stemmer would do better on irregular forms ("ate"/"eat").
func stem(w string) string {
	for _, suf := range []string{"ing", "ed", "es", "s"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
			w = w[:len(w)-len(suf)]
			break
		}
	}
	if strings.HasSuffix(w, "e") && len(w) > 3 {
		w = w[:len(w)-1]
	}
	return w
}

// temporalPart is the share of dated evidence inside the plan's range; it applies when the plan has a range and
// some evidence has a time.
func temporalPart(plan QueryPlan, hits []Evidence) Part {
	p := Part{Name: "temporal"}
	if plan.Time == nil {
		p.Why = "the query names no time"
		return p
	}
	dated, in := 0, 0
	for _, h := range hits {
		if h.Time.IsZero() {
			continue
		}
		dated++
		if plan.Time.Contains(h.Time) {
			in++
		}
	}
	if dated == 0 {
		p.Why = "no evidence has a time"
		return p
	}
	p.Applies = true
	p.Value = float64(in) / float64(dated)
	p.Why = fmt.Sprintf("%d of %d dated items in %q", in, dated, plan.Time.Expr)
	return p
}

// authorityPart is the mean belief of the current facts among the evidence; retired facts (superseded,
// retracted) count as belief 0, since an answer resting on them is out of date. It applies when there is
// semantic evidence.
func authorityPart(hits []Evidence) Part {
	p := Part{Name: "authority"}
	n, sum := 0, 0.0
	for _, h := range hits {
		if h.Type != memory.Semantic {
			continue
		}
		n++
		if h.current() {
			sum += clamp01(h.Confidence)
		}
	}
	if n == 0 {
		p.Why = "no facts among the evidence"
		return p
	}
	p.Applies = true
	p.Value = sum / float64(n)
	p.Why = fmt.Sprintf("mean belief of %d facts", n)
	return p
}

// consistencyPart is the share of current facts (with a predicate) that no other current fact contradicts: same
// single-valued predicate, same subject (when both name one), another object. It applies when there are at
// least two such facts.
func consistencyPart(hits []Evidence, multi []string) Part {
	p := Part{Name: "consistency"}
	var facts []*Evidence
	for i := range hits {
		h := &hits[i]
		if h.Type == memory.Semantic && h.current() && h.Predicate != "" && !slices.Contains(multi, h.Predicate) {
			facts = append(facts, h)
		}
	}
	if len(facts) < 2 {
		p.Why = "fewer than two current single-valued facts"
		return p
	}
	p.Applies = true
	var conflicted []string
	for i, a := range facts {
		for j, b := range facts {
			if i != j && contradicts(a, b) {
				conflicted = append(conflicted, a.ID)
				break
			}
		}
	}
	p.Value = 1 - float64(len(conflicted))/float64(len(facts))
	if len(conflicted) == 0 {
		p.Why = fmt.Sprintf("%d facts agree", len(facts))
	} else {
		p.Why = fmt.Sprintf("contradicting facts: %s", strings.Join(conflicted, ", "))
	}
	return p
}

func contradicts(a, b *Evidence) bool {
	norm := func(s string) string { return strings.Join(nameTokens(s), " ") }
	if a.Subject != "" && b.Subject != "" && norm(a.Subject) != norm(b.Subject) {
		return false
	}
	return norm(a.Predicate) == norm(b.Predicate) && norm(a.Object) != norm(b.Object)
}
