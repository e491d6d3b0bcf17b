package vector

import (
	"math"
	"math/rand/v2"
	"sort"
)

// randUnit returns a random L2-normalised vector.
func randUnit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	var n float64
	for i := range v {
		v[i] = float32(r.NormFloat64())
		n += float64(v[i]) * float64(v[i])
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// naiveSearch is the reference: score every vector with dot, sort, cut.
func naiveSearch(vecs map[string][]float32, q []float32, k int, filter func(string) bool) []Hit {
	var all []Hit
	for id, v := range vecs {
		if filter == nil || filter(id) {
			all = append(all, Hit{ID: id, Score: dot(q, v)})
		}
	}
	sort.Slice(all, func(i, j int) bool { return better(all[i], all[j]) })
	if len(all) > k {
		all = all[:k]
	}
	return all
}
