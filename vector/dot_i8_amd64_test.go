//go:build amd64 && !purego

package vector

import (
	"fmt"
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

// vnniKernel is the VNNI kernel as dotBatchI8 calls it. On a CPU without AVX-512 VNNI it cannot run, and
// dotBatchI8 never calls it there (not every machine CI runs on has it): the tests below then hold the kernel that
// does run, dotBatchI8's, to the same checks instead of skipping them.
func vnniKernel(t testing.TB) func(q *i8Query, rows []int8, out []int32) {
	t.Helper()
	if !hasVNNI {
		t.Log("CPU lacks AVX-512 VNNI: checking the dispatched kernel instead")
		return dotBatchI8
	}
	return func(q *i8Query, rows []int8, out []int32) {
		dim := len(q.narrow)
		dotBatchI8VNNI(&q.narrow[0], &rows[0], dim, len(out), &out[0], q.bias, 1<<(dim%64)-1)
	}
}

// TestI8VNNIMatchesGeneric runs the VNNI kernel and the Go one on the same rows over the full int8 range, with
// every count of rows around the four-row step and every tail around the 64-byte one; integer sums must be
// identical. Extreme rows (all -128, all 127) against extreme queries check that no lane saturates.
func TestI8VNNIMatchesGeneric(t *testing.T) {
	vnni := vnniKernel(t)
	r := rand.New(rand.NewPCG(21, 22))
	for _, dim := range i8TestDims() {
		for _, rows := range []int{1, 2, 3, 4, 5, 7, 8, 9, 19} {
			q, slab := i8QueryOf(randI8(r, dim)), randI8(r, dim*rows)
			switch rows {
			case 2:
				for i := range q.narrow {
					q.narrow[i], q.wide[i] = -128, -128
				}
				q.bias = -128 * 128 * int32(dim)
				for i := range slab {
					slab[i] = int8(-128 + 255*(i/dim%2)) // -128, then 127
				}
			case 3:
				for i := range slab {
					slab[i] = -128
				}
			}
			got, want := make([]int32, rows), make([]int32, rows)
			vnni(q, slab, got)
			dotBatchI8Generic(q.wide, slab, want)
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("dim %d rows %d row %d: vnni %d, go %d", dim, rows, i, got[i], want[i])
				}
			}
		}
	}
}

// TestI8VNNINoOverread puts rows at the end of their backing array and compares with a padded copy: a kernel
// adding in bytes past the last row's dim would differ. (That the masked loads touch no byte past it, so cannot
// fault at a page's end, is the instruction's definition; no test maps a guard page.)
func TestI8VNNINoOverread(t *testing.T) {
	vnni := vnniKernel(t)
	r := rand.New(rand.NewPCG(23, 24))
	for _, dim := range i8TestDims() {
		for _, rows := range []int{1, 4, 5} {
			q, slab := i8QueryOf(randI8(r, dim)), randI8(r, dim*rows)
			pad := append(append([]int8{}, slab...), make([]int8, 64)...)
			for i := len(slab); i < len(pad); i++ {
				pad[i] = 127
			}
			a, b := make([]int32, rows), make([]int32, rows)
			vnni(q, slab, a)
			vnni(q, pad[:len(slab)], b)
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("dim %d rows %d row %d: reads past the rows: %d vs %d", dim, rows, i, a[i], b[i])
				}
			}
		}
	}
}

// BenchmarkI8Kernels scores one block of rows with each int8 kernel the CPU has, on the built-in embedder's 256
// dimensions and a larger model's 768.
func BenchmarkI8Kernels(b *testing.B) {
	r := rand.New(rand.NewPCG(25, 26))
	for _, dim := range []int{256, 768} {
		q, slab, out := i8QueryOf(randI8(r, dim)), randI8(r, dim*blockRows), make([]int32, blockRows)
		b.Run(fmt.Sprintf("dim=%d/kernel=avx2", dim), func(b *testing.B) {
			needCPU(b, hasAVX2, "AVX2")
			b.SetBytes(int64(dim * blockRows))
			for b.Loop() {
				dotBatchI8AVX2(&q.wide[0], &slab[0], dim, blockRows, &out[0])
			}
		})
		b.Run(fmt.Sprintf("dim=%d/kernel=vnni", dim), func(b *testing.B) {
			if !hasVNNI {
				b.Skip("CPU lacks AVX-512 VNNI") // a benchmark, not a test: nothing to check
			}
			vnni := vnniKernel(b)
			b.SetBytes(int64(dim * blockRows))
			for b.Loop() {
				vnni(q, slab, out)
			}
		})
	}
}
