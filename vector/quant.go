package vector

import "math"

// quantize writes the symmetric int8 quantization of v into dst and returns
// its scale: v[i] ≈ scale * dst[i], scale = max|v[i]| / 127, values rounded
// to nearest and kept in [-127, 127] (never -128, so negation is safe and
// the kernel's int16 products can never reach the VPMADDWD overflow case).
//
// The scale is per vector rather than global: it costs 4 bytes per row,
// needs no re-quantization when later vectors have larger components, and
// uses the full int8 range for every row. For unit vectors of dim d the
// largest component is about 3.5/sqrt(d), so a global scale of 1/127 (the
// only one safe for any unit vector) would waste ~3 of the 7 bits.
func quantize(dst []int8, v []float32) float32 {
	dst = dst[:len(v)]
	m := maxAbs(v)
	if m == 0 || m != m || m > math.MaxFloat32 { // zero, NaN or Inf: all zeros
		clear(dst)
		return 0
	}
	inv := 127 / m
	for i, x := range v {
		dst[i] = round127(x * inv)
	}
	return m / 127
}

// abs32 is |x| by clearing the sign bit: the same value as math.Abs through float64, without the conversions
// (quantize runs once per stored vector, so a restart pays it for every memory).
func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// round127 rounds r (finite) half away from zero, as math.Round, and clamps it to [-127, 127], without a branch
// on the value (a row's signs and fractions are random, so branches mispredict half the time). |r| + 0.5 is exact
// in float64 for any float32 |r| ≤ 127 (at most 31 significant bits), so truncating it rounds exactly (in float32
// it would not: 0.49999997 + 0.5 rounds up to 1); TestQuantizeMatchesFloat64Rounding holds it to the float64
// reference.
func round127(r float32) int8 {
	a := float64(abs32(r))
	if a > 127 { // only a rounding overshoot of 127/m·m, or an infinite r: predictable
		a = 127
	}
	i := int32(a + 0.5)
	neg := int32(math.Float32bits(r)) >> 31 // -1 when r is negative, else 0
	return int8(i ^ neg - neg)
}

// i8Query is a query quantized as the rows are, in the layouts the int8 kernels take. Its own scale is a
// positive constant for the whole search, so ranking ignores it.
type i8Query struct {
	wide   []int16 // widened: VPMADDWD (AVX2) and the portable loop multiply int16 pairs
	narrow []int8  // as is: VPDPBUSD (AVX-512 VNNI) multiplies bytes
	bias   int32   // 128 × Σ narrow: VPDPBUSD takes the rows as unsigned bytes, r + 128, and the kernel takes this off
}

// newI8Query quantizes q (its values in [-127, 127], as a row's).
func newI8Query(q []float32) *i8Query {
	b := make([]int8, len(q))
	quantize(b, q)
	return i8QueryOf(b)
}

// i8QueryOf is the query whose quantized values are b (kept, not copied).
func i8QueryOf(b []int8) *i8Query {
	w := make([]int16, len(b))
	var sum int32
	for i, x := range b {
		w[i] = int16(x)
		sum += int32(x)
	}
	return &i8Query{wide: w, narrow: b, bias: 128 * sum}
}

// dotI8Generic is the portable int8 dot product of q and r[:len(q)], with
// int32 wrap-around arithmetic like the assembly (with |values| <= 127 it
// cannot overflow below 133k dimensions).
func dotI8Generic(q []int16, r []int8) int32 {
	r = r[:len(q)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(q); i += 4 {
		s0 += int32(q[i]) * int32(r[i])
		s1 += int32(q[i+1]) * int32(r[i+1])
		s2 += int32(q[i+2]) * int32(r[i+2])
		s3 += int32(q[i+3]) * int32(r[i+3])
	}
	for ; i < len(q); i++ {
		s0 += int32(q[i]) * int32(r[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// dotBatchI8Generic sets out[i] to q · row i of rows (rows is len(q)-strided).
func dotBatchI8Generic(q []int16, rows []int8, out []int32) {
	dim := len(q)
	for i := range out {
		out[i] = dotI8Generic(q, rows[i*dim:(i+1)*dim])
	}
}
