//go:build !amd64 || purego

package vector

// dotBatch sets out[i] to q · row i of rows (rows is len(q)-strided).
func dotBatch(q, rows, out []float32) { dotBatchGeneric(q, rows, out) }

// dotBatchI8 sets out[i] to q · row i of the int8 rows (len(q)-strided).
func dotBatchI8(q []int16, rows []int8, out []int32) { dotBatchI8Generic(q, rows, out) }

// dot returns a · b; b must be at least as long as a.
func dot(a, b []float32) float32 { return dotGeneric(a, b) }
