package embed

import (
	"context"
	"math"
)

// Embedder turns texts into L2-normalised vectors.
//
// Every implementation in this package maps the empty string to a zero vector
// of length Dim(): a zero vector has no direction, so it cannot be normalised,
// and callers must treat it as "no signal" (its cosine with anything is 0).
// Returned vectors are fresh slices owned by the caller.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Dim() int
	// Fingerprint identifies provider, model, endpoint and parameters: it changes whenever vectors would change.
	Fingerprint() string
}

// normalize scales v to unit L2 length in place; a zero vector stays zero.
func normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
}

// matrix returns n slices of length dim backed by one allocation, so a batch
// costs two allocations instead of n+1.
func matrix(n, dim int) [][]float32 {
	backing := make([]float32, n*dim)
	out := make([][]float32, n)
	for i := range out {
		out[i] = backing[i*dim : (i+1)*dim : (i+1)*dim]
	}
	return out
}
