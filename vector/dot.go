package vector

// dotGeneric is the portable dot product of a and b[:len(a)]. Four
// accumulators break the add dependency chain so the loop is not latency bound.
func dotGeneric(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += a[i]*b[i] + a[i+4]*b[i+4]
		s1 += a[i+1]*b[i+1] + a[i+5]*b[i+5]
		s2 += a[i+2]*b[i+2] + a[i+6]*b[i+6]
		s3 += a[i+3]*b[i+3] + a[i+7]*b[i+7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// dotBatchGeneric sets out[i] to q · row i of rows (rows is len(q)-strided).
func dotBatchGeneric(q, rows, out []float32) {
	dim := len(q)
	for i := range out {
		out[i] = dotGeneric(q, rows[i*dim:(i+1)*dim])
	}
}
