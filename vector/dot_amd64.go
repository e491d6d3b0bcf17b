//go:build amd64 && !purego

package vector

import "golang.org/x/sys/cpu"

// hasAVX2FMAF16C, hasAVX2 and hasVNNI are read once at start-up; they are facts about the CPU, not state.
var (
	hasAVX2FMAF16C = cpu.X86.HasAVX2 && cpu.X86.HasFMA && hasF16CInsn()
	hasAVX2        = cpu.X86.HasAVX2
	// x/sys/cpu reports AVX-512 features only where the OS saves the registers.
	hasVNNI = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI
)

// dotBatchF16AVX2 sets out[i] = q · half row i of rows for i < n. It is in dot_f16_amd64.s: one call scores a
// whole block, so the Go-to-asm call cost is paid once per block instead of once per row.
//
//go:noescape
func dotBatchF16AVX2(q *float32, rows *uint16, dim, n int, out *float32)

// hasF16CInsn reports whether the CPU converts half precision (F16C). It is in dot_f16_amd64.s.
func hasF16CInsn() bool

// dotBatchI8AVX2 sets out[i] = Σ_j q[j]*rows[i*dim+j] for i < n, in int32.
// It is in dot_i8_amd64.s.
//
//go:noescape
func dotBatchI8AVX2(q *int16, rows *int8, dim, n int, out *int32)

// dotBatchI8VNNI sets out[i] = Σ_j q[j]*rows[i*dim+j] - bias for i < n, in int32; bias must be 128 × Σ q (the
// kernel reads the rows as unsigned bytes offset by 128) and tail the mask of dim%64 low bits. It is in
// dot_i8_vnni_amd64.s: about three times the AVX2 kernel's rows a second (vector/DESIGN.md).
//
//go:noescape
func dotBatchI8VNNI(q *int8, rows *int8, dim, n int, out *int32, bias int32, tail uint64)

// dotBatchF16 sets out[i] to q · half row i of rows (rows is len(q)-strided).
func dotBatchF16(q []float32, rows []uint16, out []float32) {
	if len(out) == 0 || len(q) == 0 {
		return
	}
	_ = rows[len(out)*len(q)-1] // the assembly does no bounds checks
	if hasAVX2FMAF16C {
		dotBatchF16AVX2(&q[0], &rows[0], len(q), len(out), &out[0])
		return
	}
	dotBatchF16Generic(q, rows, out)
}

// dotF16 returns q · the half row r; r must be at least as long as q.
func dotF16(q []float32, r []uint16) float32 {
	var out [1]float32
	dotBatchF16(q, r[:len(q)], out[:])
	return out[0]
}

// dotBatchI8 sets out[i] to q · row i of the int8 rows (len(q.wide)-strided).
func dotBatchI8(q *i8Query, rows []int8, out []int32) {
	dim := len(q.wide)
	if len(out) == 0 || dim == 0 {
		return
	}
	_ = rows[len(out)*dim-1] // the assembly does no bounds checks
	switch {
	case hasVNNI:
		dotBatchI8VNNI(&q.narrow[0], &rows[0], dim, len(out), &out[0], q.bias, 1<<(dim%64)-1)
	case hasAVX2:
		dotBatchI8AVX2(&q.wide[0], &rows[0], dim, len(out), &out[0])
	default:
		dotBatchI8Generic(q.wide, rows, out)
	}
}
