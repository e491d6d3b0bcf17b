package vector

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/x448/float16"
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

// closeTo checks got against the float64 dot product of q and the half row h, scaled by the sum of |q_i*h_i|
// because summation order legitimately differs between kernels.
func closeTo(t *testing.T, got float32, q []float32, h []uint16) {
	t.Helper()
	var want, mag float64
	for i := range q {
		p := float64(q[i]) * float64(float16.Frombits(h[i]).Float32())
		want += p
		mag += math.Abs(p)
	}
	if math.Abs(float64(got)-want) > 1e-5*mag+1e-7 {
		t.Fatalf("dim %d: got %v, want %v", len(q), got, want)
	}
}

func TestDotF16MatchesFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dim := range testDims() {
		for range 5 {
			q, h := randVec(r, dim), randHalf(r, dim)
			closeTo(t, dotF16(q, h), q, h)
			closeTo(t, dotF16Generic(q, h), q, h)
		}
	}
}

func TestDotBatchF16MatchesDotF16(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, dim := range testDims() {
		const rows = 37
		q, slab := randVec(r, dim), randHalf(r, dim*rows)
		out := make([]float32, rows)
		dotBatchF16(q, slab, out)
		for i, got := range out {
			if want := dotF16(q, slab[i*dim:(i+1)*dim]); got != want {
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

// randHalf returns n random half-precision values in (-1, 1), as encodeRow stores them.
func randHalf(r *rand.Rand, n int) []uint16 {
	v := make([]uint16, n)
	for i := range v {
		v[i] = float16.Fromfloat32(float32(2*r.Float64() - 1)).Bits()
	}
	return v
}

// dot is the float32 dot product of a and b, summed in float64: the reference half rows are held against.
func dot(a, b []float32) float32 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return float32(s)
}
