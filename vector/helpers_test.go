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
			all = append(all, Hit{ID: id, Score: storedScore(q, v)})
		}
	}
	sort.Slice(all, func(i, j int) bool { return better(all[i], all[j]) })
	if len(all) > k {
		all = all[:k]
	}
	return all
}

// stored returns v as the index stores it: its half row, int8 row and scale.
func stored(v []float32) ([]uint16, []int8, float32) {
	half, q8 := make([]uint16, len(v)), make([]int8, len(v))
	s := encodeRow(half, q8, v)
	return half, q8, s
}

// storedScore is q's score against v as the index stores it.
func storedScore(q, v []float32) float32 {
	half, _, s := stored(v)
	return dotF16(q, half) * s
}

// asStored is v as the index hands it back: its half row scaled back.
func asStored(v []float32) []float32 {
	half, _, s := stored(v)
	out := make([]float32, len(v))
	decodeRow(out, half, s)
	return out
}
