package vector

import (
	"math"
	"math/rand/v2"
	"testing"
)

// testDims covers short vectors, every tail length around the 8- and
// 32-float blocks, and the production dimensions with odd neighbours.
func testDims() []int {
	var d []int
	for i := 1; i <= 70; i++ {
		d = append(d, i)
	}
	return append(d, 95, 96, 97, 255, 256, 257, 383, 384, 385, 767, 768, 769, 1000, 1536)
}

// closeTo checks got against the float64 dot product, scaled by the sum of
// |a_i*b_i| because summation order legitimately differs between kernels.
func closeTo(t *testing.T, got float32, a, b []float32) {
	t.Helper()
	var want, mag float64
	for i := range a {
		p := float64(a[i]) * float64(b[i])
		want += p
		mag += math.Abs(p)
	}
	if math.Abs(float64(got)-want) > 1e-5*mag+1e-7 {
		t.Fatalf("dim %d: got %v, want %v", len(a), got, want)
	}
}

func TestDotMatchesFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dim := range testDims() {
		for range 5 {
			a, b := randVec(r, dim), randVec(r, dim)
			closeTo(t, dot(a, b), a, b)
			closeTo(t, dotGeneric(a, b), a, b)
		}
	}
}

func TestDotBatchMatchesDot(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, dim := range testDims() {
		const rows = 37
		q, slab := randVec(r, dim), randVec(r, dim*rows)
		out := make([]float32, rows)
		dotBatch(q, slab, out)
		for i, got := range out {
			if want := dot(q, slab[i*dim:(i+1)*dim]); got != want {
				t.Fatalf("dim %d row %d: batch %v, single %v", dim, i, got, want)
			}
		}
	}
}

// randVec is not normalised, so magnitudes and signs vary widely.
func randVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64() * 10)
	}
	return v
}
