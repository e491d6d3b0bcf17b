//go:build amd64 && !purego

package vector

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAVX2MatchesGeneric runs the assembly and the Go kernel on the same
// random rows; they may differ only by rounding from summation order.
func TestAVX2MatchesGeneric(t *testing.T) {
	needCPU(t, hasAVX2FMA, "AVX2+FMA")
	r := rand.New(rand.NewPCG(5, 6))
	for _, dim := range testDims() {
		const rows = 19
		q, slab := randVec(r, dim), randVec(r, dim*rows)
		asm, ref := make([]float32, rows), make([]float32, rows)
		dotBatchAVX2(&q[0], &slab[0], dim, rows, &asm[0])
		dotBatchGeneric(q, slab, ref)
		for i := range asm {
			row := slab[i*dim : (i+1)*dim]
			var mag float64
			for j := range q {
				mag += math.Abs(float64(q[j]) * float64(row[j]))
			}
			if d := math.Abs(float64(asm[i] - ref[i])); d > 1e-5*mag+1e-7 {
				t.Fatalf("dim %d row %d: asm %v, go %v", dim, i, asm[i], ref[i])
			}
		}
	}
}

// TestAVX2NoOverread puts the vectors at the very end of their backing
// arrays so a kernel reading past dim would read another row's data and the
// comparison with a fresh copy would expose it.
func TestAVX2NoOverread(t *testing.T) {
	needCPU(t, hasAVX2FMA, "AVX2+FMA")
	r := rand.New(rand.NewPCG(7, 8))
	for _, dim := range testDims() {
		q := randVec(r, dim)
		row := randVec(r, dim)
		pad := append(append([]float32{}, row...), 1e30, 1e30, 1e30, 1e30, 1e30, 1e30, 1e30, 1e30)
		var a, b float32
		dotBatchAVX2(&q[0], &row[0], dim, 1, &a)
		dotBatchAVX2(&q[0], &pad[0], dim, 1, &b)
		if a != b {
			t.Fatalf("dim %d: reads past the row: %v vs %v", dim, a, b)
		}
	}
}
