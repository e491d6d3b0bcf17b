//go:build !amd64 || purego

package vector

// dotBatchI8 sets out[i] to q · row i of the int8 rows (len(q.wide)-strided).
func dotBatchI8(q *i8Query, rows []int8, out []int32) { dotBatchI8Generic(q.wide, rows, out) }

// dotBatchF16 sets out[i] to q · half row i of rows (rows is len(q)-strided).
func dotBatchF16(q []float32, rows []uint16, out []float32) { dotBatchF16Generic(q, rows, out) }

// dotF16 returns q · the half row r; r must be at least as long as q.
func dotF16(q []float32, r []uint16) float32 { return dotF16Generic(q, r) }
