package retrieval

import (
	"math"
	"slices"
)

// calibrationDepth is how many of the best results the match strength looks at: the top one may be a
// neighbour lifted by its episode rather than the memory that matched.
const calibrationDepth = 3

// calibrate turns the pipeline's relative scores (the best fused candidate is 1, boosts and shares on top) into
// absolute ones: the best result scores the query's match strength, the others keep their ratio to it.
// Strength is, over the first results, the best of TextWeight × the share of the query's content words the
// memory contains (after light stemming) + VectorWeight × its cosine. So a query about nothing stored scores
// low however the relative ranking came out, a min_score means what it means in hybrid mode, and the context
// pipeline's confidence gate sees weak evidence as weak. The order is unchanged. Results below the floor go.
func (r *pipelineRun) calibrate(out []Result) []Result {
	if len(out) == 0 {
		return out
	}
	terms := stems(r.plan.Terms)
	strength := 0.0
	for _, res := range out[:min(calibrationDepth, len(out))] {
		v := r.p.TextWeight*termCoverage(terms, res.Memory.Text, res.Memory.Entities) +
			r.p.VectorWeight*math.Max(res.VectorScore, 0)
		strength = math.Max(strength, v)
	}
	strength = math.Min(1, strength/(r.p.TextWeight+r.p.VectorWeight))
	top := out[0].Score
	for i := range out {
		if top > 0 {
			out[i].Score = out[i].Score / top * strength
		}
	}
	return slices.DeleteFunc(out, func(res Result) bool { return res.Score < r.q.MinScore })
}

// termCoverage is the share of the stemmed terms found in text or entities.
func termCoverage(terms []string, text string, entities []string) float64 {
	if len(terms) == 0 {
		return 0
	}
	have := map[string]bool{}
	for _, t := range stems(nameTokens(text)) {
		have[t] = true
	}
	for _, e := range entities {
		for _, t := range stems(nameTokens(e)) {
			have[t] = true
		}
	}
	n := 0
	for _, t := range terms {
		if have[t] {
			n++
		}
	}
	return float64(n) / float64(len(terms))
}
