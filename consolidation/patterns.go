package consolidation

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// PatternOptions configure episodic → semantic pattern consolidation.
type PatternOptions struct {
	// JoinThreshold: an episode joins the cluster whose members it resembles most on
	// average, if that similarity reaches this. Default 0.3.
	JoinThreshold float64
	// MinSupport: clusters with fewer episodes propose nothing. Default 3.
	MinSupport int
	// CoreShare: a term is part of the pattern when this share of the cluster's episodes
	// contain it. Default 0.6.
	CoreShare float64
	// FrequencyHalf is K in the frequency factor n/(n+K): the support at which frequency
	// alone gives 0.5. Default 2 (3 episodes → 0.6, 5 → 0.71, 8 → 0.8).
	FrequencyHalf float64
	// PromoteAt: confidence = frequency × consistency; reaching this promotes the pattern
	// to a fact. Default 0.55 (three fully consistent episodes, as on three different days).
	PromoteAt float64
	// CorrectionFactor multiplies confidence on each user correction. Default 0.5.
	CorrectionFactor float64
	// A pattern is retracted for good below RetractBelow or after RetractAfter
	// corrections. Defaults 0.3 and 2.
	RetractBelow float64
	RetractAfter int
	// MaxCoreTerms bounds a pattern's phrase. Default 6.
	MaxCoreTerms int
}

func (o PatternOptions) withDefaults() PatternOptions {
	defFloat(&o.JoinThreshold, 0.3)
	defInt(&o.MinSupport, 3)
	defFloat(&o.CoreShare, 0.6)
	defFloat(&o.FrequencyHalf, 2)
	defFloat(&o.PromoteAt, 0.55)
	defFloat(&o.CorrectionFactor, 0.5)
	defFloat(&o.RetractBelow, 0.3)
	defInt(&o.RetractAfter, 2)
	defInt(&o.MaxCoreTerms, 6)
	return o
}

// Validate checks the options.
func (o PatternOptions) Validate() error {
	var c check
	c.unit("patterns.join_threshold", o.JoinThreshold)
	c.nonNeg("patterns.min_support", float64(o.MinSupport))
	c.unit("patterns.core_share", o.CoreShare)
	c.nonNeg("patterns.frequency_half", o.FrequencyHalf)
	c.unit("patterns.promote_at", o.PromoteAt)
	c.unit("patterns.correction_factor", o.CorrectionFactor)
	c.unit("patterns.retract_below", o.RetractBelow)
	c.nonNeg("patterns.retract_after", float64(o.RetractAfter))
	c.nonNeg("patterns.max_core_terms", float64(o.MaxCoreTerms))
	d := o.withDefaults()
	c.cond(d.RetractBelow < d.PromoteAt, "patterns.retract_below %v must be below patterns.promote_at %v", d.RetractBelow, d.PromoteAt)
	return c.err
}

// PatternStatus is where a pattern stands.
type PatternStatus string

// Pattern states. A promoted pattern is a fact (predicate "pattern"); a retracted one
// stays retracted, so the same evidence does not promote it again.
const (
	Tentative PatternStatus = "tentative"
	Promoted  PatternStatus = "promoted"
	Retracted PatternStatus = "retracted"
)

// Pattern is a recurring theme across episodes: a tentative statement until its
// confidence reaches PromoteAt.
type Pattern struct {
	// Key is stable across runs: the sorted core terms at first detection.
	Key string `json:"key"`
	// Phrase is the core terms in reading order, e.g. "booked morning flight"; frozen
	// once promoted so the fact it became can be found again.
	Phrase      string        `json:"phrase"`
	Statement   string        `json:"statement"`
	Terms       []string      `json:"terms"` // sorted, stemmed core terms
	Episodes    []string      `json:"episodes"`
	Support     int           `json:"support"`
	Consistency float64       `json:"consistency"`
	Confidence  float64       `json:"confidence"`
	Status      PatternStatus `json:"status"`
	Corrections int           `json:"corrections,omitempty"`
	// FirstSeen and LastSeen are the earliest and latest evidence (episode starts): the behaviour's valid
	// time, as opposed to UpdatedAt, when consolidation last looked at it.
	FirstSeen time.Time `json:"first_seen,omitzero"`
	LastSeen  time.Time `json:"last_seen,omitzero"`
	UpdatedAt time.Time `json:"updated_at"`
}

// SimilarityFunc scores two texts in [0, 1]. LexicalSimilarity is the default; a cosine of
// (e.g. hashed) embeddings can be injected.
type SimilarityFunc func(a, b string) float64

// DetectPatterns clusters episodes, proposes a pattern per cluster of MinSupport or more,
// and merges the result into prev (matching by shared core terms, so corrections and
// retractions survive). It returns every pattern (prev ones not seen again unchanged),
// ordered by key, and a Candidate for each pattern promoted by this call.
func DetectPatterns(prev []Pattern, episodes []Episode, sim SimilarityFunc, now time.Time, opts PatternOptions) ([]Pattern, []Candidate, error) {
	if err := opts.Validate(); err != nil {
		return nil, nil, err
	}
	if now.IsZero() {
		return nil, nil, fmt.Errorf("%w: detect patterns: now is missing", ErrInvalidInput)
	}
	if sim == nil {
		sim = LexicalSimilarity
	}
	o := opts.withDefaults()
	eps := sortedEpisodes(episodes)
	var found []Pattern
	for _, cl := range cluster(eps, sim, o.JoinThreshold) {
		if len(cl) >= o.MinSupport {
			if p, ok := propose(eps, cl, o); ok {
				found = append(found, p)
			}
		}
	}
	ps, cands := mergePatterns(prev, found, now, o)
	return ps, cands, nil
}

func sortedEpisodes(in []Episode) []Episode {
	eps := append([]Episode(nil), in...)
	sort.SliceStable(eps, func(i, j int) bool {
		if !eps[i].Start.Equal(eps[j].Start) {
			return eps[i].Start.Before(eps[j].Start)
		}
		return eps[i].ID < eps[j].ID
	})
	return eps
}

func episodeText(e Episode) string {
	if e.Summary != "" {
		return e.Summary
	}
	var b strings.Builder
	for _, m := range e.Messages {
		b.WriteString(m.Content + " ")
	}
	return b.String()
}

// cluster assigns each episode, in time order, to the cluster it resembles most on
// average (ties: the older cluster), or starts a new one. Deterministic for a given order.
func cluster(eps []Episode, sim SimilarityFunc, threshold float64) [][]int {
	texts := make([]string, len(eps))
	for i, e := range eps {
		texts[i] = episodeText(e)
	}
	var clusters [][]int
	for i := range eps {
		best, bestSim := -1, threshold
		for c, members := range clusters {
			var s float64
			for _, j := range members {
				s += sim(texts[i], texts[j])
			}
			if s /= float64(len(members)); s >= bestSim && (best < 0 || s > bestSim) {
				best, bestSim = c, s
			}
		}
		if best < 0 {
			clusters = append(clusters, []int{i})
			continue
		}
		clusters[best] = append(clusters[best], i)
	}
	return clusters
}

// propose builds the tentative pattern of a cluster: its core terms, phrase, and
// confidence = n/(n+K) × consistency, where consistency is the mean share of the core
// terms each episode contains.
func propose(eps []Episode, members []int, o PatternOptions) (Pattern, bool) {
	sets := make([]map[string]bool, len(members))
	df := map[string]int{}
	surface := map[string]string{}
	for i, m := range members {
		sets[i] = map[string]bool{}
		for _, w := range words(episodeText(eps[m])) {
			if stopwords[w] || len([]rune(w)) < 2 || allDigits(w) {
				continue // a day or a year ("05", "2026") dates one episode; it is no part of a habit
			}
			st := stem(w)
			if _, ok := surface[st]; !ok {
				surface[st] = w
			}
			if !sets[i][st] {
				sets[i][st] = true
				df[st]++
			}
		}
	}
	core := mergeInflections(coreTerms(df, len(members), contentWords(episodeText(eps[members[0]])), o), surface)
	if len(core) == 0 {
		return Pattern{}, false
	}
	var cons float64
	for _, s := range sets {
		n := 0
		for _, t := range core {
			if s[t] {
				n++
			}
		}
		cons += float64(n) / float64(len(core))
	}
	cons /= float64(len(sets))
	p := Pattern{Support: len(members), Consistency: round3(cons), Status: Tentative}
	n := float64(len(members))
	p.Confidence = round3(n / (n + o.FrequencyHalf) * cons)
	phrase := make([]string, len(core))
	for i, t := range core {
		phrase[i] = surface[t]
	}
	for _, m := range members {
		p.Episodes = append(p.Episodes, eps[m].ID)
		if at := eps[m].Start; !at.IsZero() && (p.FirstSeen.IsZero() || at.Before(p.FirstSeen)) {
			p.FirstSeen = at
		}
		if at := eps[m].Start; at.After(p.LastSeen) {
			p.LastSeen = at
		}
	}
	p.Phrase = habitPhrase(phrase, membersText(eps, members))
	p.Statement = statement(SubjectUser, PredPattern, p.Phrase, false)
	p.Terms = append([]string(nil), core...)
	sort.Strings(p.Terms)
	p.Key = strings.Join(p.Terms, "+")
	return p, true
}

// coreTerms keeps terms in CoreShare of the members, the most shared first (at most
// MaxCoreTerms), then puts them in the first episode's reading order.
func coreTerms(df map[string]int, n int, firstText []string, o PatternOptions) []string {
	var core []string
	for _, t := range sortedKeys(df) {
		if float64(df[t]) >= o.CoreShare*float64(n) {
			core = append(core, t)
		}
	}
	sort.SliceStable(core, func(i, j int) bool { return df[core[i]] > df[core[j]] })
	if len(core) > o.MaxCoreTerms {
		core = core[:o.MaxCoreTerms]
	}
	pos := map[string]int{}
	for i, w := range firstText {
		if _, ok := pos[w]; !ok {
			pos[w] = i
		}
	}
	sort.SliceStable(core, func(i, j int) bool { return posOr(pos, core[i]) < posOr(pos, core[j]) })
	return core
}

func posOr(pos map[string]int, t string) int {
	if p, ok := pos[t]; ok {
		return p
	}
	return math.MaxInt
}
