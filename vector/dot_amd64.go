//go:build amd64 && !purego

package vector

import "golang.org/x/sys/cpu"

// hasAVX2FMA and hasAVX2 are read once at start-up; they are facts about
// the CPU, not state.
var (
	hasAVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	hasAVX2    = cpu.X86.HasAVX2
)

// dotBatchAVX2 sets out[i] = q · rows[i*dim:(i+1)*dim] for i < n. It is in
// dot_amd64.s: one call scores a whole block, so the Go-to-asm call cost is
// paid once per block instead of once per row.
//
//go:noescape
func dotBatchAVX2(q, rows *float32, dim, n int, out *float32)

// dotBatchI8AVX2 sets out[i] = Σ_j q[j]*rows[i*dim+j] for i < n, in int32.
// It is in dot_i8_amd64.s.
//
//go:noescape
func dotBatchI8AVX2(q *int16, rows *int8, dim, n int, out *int32)

// dotBatch sets out[i] to q · row i of rows (rows is len(q)-strided).
func dotBatch(q, rows, out []float32) {
	if len(out) == 0 || len(q) == 0 {
		return
	}
	_ = rows[len(out)*len(q)-1] // the assembly does no bounds checks
	if hasAVX2FMA {
		dotBatchAVX2(&q[0], &rows[0], len(q), len(out), &out[0])
		return
	}
	dotBatchGeneric(q, rows, out)
}

// dotBatchI8 sets out[i] to q · row i of the int8 rows (len(q)-strided).
func dotBatchI8(q []int16, rows []int8, out []int32) {
	if len(out) == 0 || len(q) == 0 {
		return
	}
	_ = rows[len(out)*len(q)-1] // the assembly does no bounds checks
	if hasAVX2 {
		dotBatchI8AVX2(&q[0], &rows[0], len(q), len(out), &out[0])
		return
	}
	dotBatchI8Generic(q, rows, out)
}

// dot returns a · b; b must be at least as long as a.
func dot(a, b []float32) float32 {
	var out [1]float32
	dotBatch(a, b[:len(a)], out[:])
	return out[0]
}
