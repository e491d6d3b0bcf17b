//go:build amd64 && !purego

package vector

import (
	"math/rand/v2"
	"testing"
)

// TestI8AVX2MatchesGeneric runs the int8 assembly and the Go kernel on the
// same random rows over the full int8 range and a wide int16 query range;
// integer sums must be identical.
func TestI8AVX2MatchesGeneric(t *testing.T) {
	needCPU(t, hasAVX2, "AVX2")
	r := rand.New(rand.NewPCG(11, 12))
	for _, dim := range i8TestDims() {
		for _, qmax := range []int{127, 32767} {
			const rows = 19
			q, slab := randI16(r, dim, qmax), randI8(r, dim*rows)
			asm, ref := make([]int32, rows), make([]int32, rows)
			dotBatchI8AVX2(&q[0], &slab[0], dim, rows, &asm[0])
			dotBatchI8Generic(q, slab, ref)
			for i := range asm {
				if asm[i] != ref[i] {
					t.Fatalf("dim %d qmax %d row %d: asm %d, go %d", dim, qmax, i, asm[i], ref[i])
				}
			}
		}
	}
}

// TestI8AVX2NoOverread puts a row at the end of its backing array and
// compares with a padded copy: a kernel reading past dim would differ.
func TestI8AVX2NoOverread(t *testing.T) {
	needCPU(t, hasAVX2, "AVX2")
	r := rand.New(rand.NewPCG(13, 14))
	for _, dim := range i8TestDims() {
		q, row := randI16(r, dim, 127), randI8(r, dim)
		pad := append(append([]int8{}, row...), make([]int8, 64)...)
		for i := dim; i < len(pad); i++ {
			pad[i] = 127
		}
		var a, b int32
		dotBatchI8AVX2(&q[0], &row[0], dim, 1, &a)
		dotBatchI8AVX2(&q[0], &pad[0], dim, 1, &b)
		if a != b {
			t.Fatalf("dim %d: reads past the row: %d vs %d", dim, a, b)
		}
	}
}
