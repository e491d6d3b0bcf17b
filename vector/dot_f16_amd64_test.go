//go:build amd64 && !purego

package vector

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/x448/float16"
)

// TestF16AVX2MatchesGeneric runs the half-precision assembly and the Go kernel on the same random rows; the
// widening is exact in both, so they may differ only by rounding from summation order.
func TestF16AVX2MatchesGeneric(t *testing.T) {
	needCPU(t, hasAVX2FMAF16C, "AVX2+FMA+F16C")
	r := rand.New(rand.NewPCG(15, 16))
	for _, dim := range testDims() {
		const rows = 19
		q, slab := randVec(r, dim), randHalf(r, dim*rows)
		asm, ref := make([]float32, rows), make([]float32, rows)
		dotBatchF16AVX2(&q[0], &slab[0], dim, rows, &asm[0])
		dotBatchF16Generic(q, slab, ref)
		for i := range asm {
			var mag float64
			for j := range q {
				mag += math.Abs(float64(q[j]) * float64(float16.Frombits(slab[i*dim+j]).Float32()))
			}
			if d := math.Abs(float64(asm[i] - ref[i])); d > 1e-5*mag+1e-7 {
				t.Fatalf("dim %d row %d: asm %v, go %v", dim, i, asm[i], ref[i])
			}
		}
	}
}

// TestF16AVX2NoOverread puts a row at the end of its backing array and compares with a padded copy: a kernel
// reading past dim would differ.
func TestF16AVX2NoOverread(t *testing.T) {
	needCPU(t, hasAVX2FMAF16C, "AVX2+FMA+F16C")
	r := rand.New(rand.NewPCG(17, 18))
	for _, dim := range testDims() {
		q, row := randVec(r, dim), randHalf(r, dim)
		pad := append(append([]uint16{}, row...), make([]uint16, 16)...)
		for i := dim; i < len(pad); i++ {
			pad[i] = float16.Fromfloat32(1000).Bits()
		}
		var a, b float32
		dotBatchF16AVX2(&q[0], &row[0], dim, 1, &a)
		dotBatchF16AVX2(&q[0], &pad[0], dim, 1, &b)
		if a != b {
			t.Fatalf("dim %d: reads past the row: %v vs %v", dim, a, b)
		}
	}
}
