package consolidation

import (
	"math"
	"time"
)

// mergePatterns matches each found pattern to the prev pattern sharing most core terms
// (Jaccard ≥ 0.5, each prev matched once) and carries over its key, corrections and
// status. A tentative pattern reaching PromoteAt is promoted and proposed as a fact.
func mergePatterns(prev, found []Pattern, now time.Time, o PatternOptions) ([]Pattern, []Candidate) {
	out := map[string]Pattern{}
	for _, p := range prev {
		out[p.Key] = p
	}
	used := map[string]bool{}
	var cands []Candidate
	for _, f := range found {
		old, ok := bestMatch(prev, f, used)
		if ok {
			used[old.Key] = true
			f = carryOver(old, f, o)
		}
		f.UpdatedAt = now
		if f.Status == Tentative && f.Confidence >= o.PromoteAt {
			f.Status = Promoted
			cands = append(cands, patternCandidate(f, Positive, now))
		}
		out[f.Key] = f
	}
	ps := make([]Pattern, 0, len(out))
	for _, k := range sortedKeys(out) {
		ps = append(ps, out[k])
	}
	return ps, cands
}

func bestMatch(prev []Pattern, f Pattern, used map[string]bool) (Pattern, bool) {
	var best Pattern
	bestJ := 0.5
	found := false
	for _, p := range prev {
		if used[p.Key] {
			continue
		}
		if j := jaccard(p.Terms, f.Terms); j > bestJ || (j == bestJ && (!found || p.Key < best.Key)) {
			best, bestJ, found = p, j, true
		}
	}
	return best, found
}

// carryOver keeps the identity and the user's corrections of an earlier pattern: the
// confidence of a corrected pattern stays scaled down by CorrectionFactor per correction;
// a promoted pattern keeps its phrase; a retracted one stays retracted.
func carryOver(old, f Pattern, o PatternOptions) Pattern {
	f.Key, f.Corrections, f.Status = old.Key, old.Corrections, old.Status
	f.Confidence = round3(f.Confidence * math.Pow(o.CorrectionFactor, float64(old.Corrections)))
	if !old.FirstSeen.IsZero() && (f.FirstSeen.IsZero() || old.FirstSeen.Before(f.FirstSeen)) {
		f.FirstSeen = old.FirstSeen // older evidence may have left the window of recent episodes
	}
	if old.LastSeen.After(f.LastSeen) {
		f.LastSeen = old.LastSeen
	}
	if old.Status == Promoted || old.Status == Retracted {
		f.Phrase, f.Statement, f.Terms = old.Phrase, old.Statement, old.Terms
	}
	return f
}

func jaccard(a, b []string) float64 {
	in := map[string]bool{}
	for _, x := range a {
		in[x] = true
	}
	inter := 0
	union := len(in)
	for _, x := range b {
		if in[x] {
			inter++
		} else {
			union++
		}
	}
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

// CorrectPattern records a user correction ("that's not true, I just happened to…"):
// confidence × CorrectionFactor; retracted for good below RetractBelow or after
// RetractAfter corrections, otherwise demoted to tentative below PromoteAt. When a
// promoted pattern loses its promotion, the returned Candidate retracts its fact.
func CorrectPattern(p Pattern, now time.Time, opts PatternOptions) (Pattern, *Candidate, error) {
	if err := opts.Validate(); err != nil {
		return p, nil, err
	}
	o := opts.withDefaults()
	wasPromoted := p.Status == Promoted
	p.Corrections++
	p.Confidence = round3(p.Confidence * o.CorrectionFactor)
	p.UpdatedAt = now
	switch {
	case p.Confidence < o.RetractBelow || p.Corrections >= o.RetractAfter:
		p.Status = Retracted
	case p.Confidence < o.PromoteAt && p.Status == Promoted:
		p.Status = Tentative
	}
	if wasPromoted && p.Status != Promoted {
		c := patternCandidate(p, Negative, now)
		return p, &c, nil
	}
	return p, nil, nil
}

// patternCandidate proposes (or, Negative, retracts) a pattern's fact. A promotion is valid from the first
// evidence of the habit; a retraction happens now, when the user corrected it.
func patternCandidate(p Pattern, pol Polarity, now time.Time) Candidate {
	at := now
	if pol == Positive && !p.FirstSeen.IsZero() && p.FirstSeen.Before(now) {
		at = p.FirstSeen
	}
	return Candidate{Subject: SubjectUser, Predicate: PredPattern, Object: p.Phrase,
		Statement: statement(SubjectUser, PredPattern, p.Phrase, pol == Negative), Polarity: pol,
		Source: "pattern:" + p.Key, Time: at}
}
