package vector

import (
	"math"

	"github.com/x448/float16"
)

// encodeRow stores v as a half-precision row scaled so that its largest component is ±1, and returns the scale:
// v[i] ≈ scale × half[i]. With q8 non-nil it also writes the row's int8 copy, round(127 × half[i]), taken from
// the half values so that it depends on nothing else: a row re-encoded from its own decoding (a checkpoint
// reloaded) gets the same half and int8 rows and the same scale. A vector that is zero, holds a NaN or an
// infinity, or whose largest component is below 2^-127 is stored as zeros with scale 0.
//
// The scale keeps every vector in half precision's normal range whatever its magnitude (half tops out at
// 65504 and loses precision below 6.1e-5), so a row keeps 11 significant bits in every component that is at
// least 1/16384 of its largest.
func encodeRow(half []uint16, q8 []int8, v []float32) float32 {
	half = half[:len(v)]
	m := maxAbs(v)
	inv := 1 / m
	// A largest component below 2^-127 has no finite reciprocal: such a vector is stored as zeros too, as one
	// that cannot be scaled, rather than as infinities that no decoder would take back.
	if m == 0 || m != m || m > math.MaxFloat32 || inv > math.MaxFloat32 {
		clear(half)
		clear(q8)
		return 0
	}
	// x*inv of the largest component is within an ulp of ±1, which half precision rounds to ±1 exactly.
	if q8 == nil {
		for i, x := range v {
			half[i], _ = toHalf(x * inv)
		}
		return m
	}
	q8 = q8[:len(v)]
	for i, x := range v {
		h, r := toHalf(x * inv)
		half[i], q8[i] = h, roundHalf127(r)
	}
	return m
}

// roundHalf127 is round127(127 × h) for a half value h in [-1, 1], in float32 alone: 127 × h has at most 18
// significant bits and 7 integer bits, so it and its sum with ±0.5 are exact, and it is never k + 0.5 (h would
// be (2k+1)/254, which no binary fraction is); truncating x ± 0.5 toward zero then rounds to nearest.
func roundHalf127(h float32) int8 {
	x := 127 * h
	half := math.Float32frombits(0x3f000000 | math.Float32bits(x)&(1<<31)) // ±0.5 with x's sign
	return int8(x + half)
}

// toHalf rounds x to half precision (to nearest, ties to even) and returns its bits and its value. Components
// of a scaled row are at most 1 and mostly above half's subnormal range, where bit operations on x's float32
// bits round it: add just under half the dropped bits' weight (plus the kept last bit, for ties to even), clear
// them, and move the exponent down to half's bias. Anything else goes through the float16 package.
func toHalf(x float32) (uint16, float32) {
	const (
		minNormal = 0x38800000 // 2^-14, half's least normal value
		maxFinite = 0x477fe000 // 65504, half's largest
		rebias    = 0x38000000 // (127 - 15) << 23
	)
	b := math.Float32bits(x)
	sign, a := b&(1<<31), b&^(1<<31)
	if a < minNormal || a >= maxFinite {
		f := float16.Fromfloat32(x)
		return f.Bits(), f.Float32()
	}
	a += 0xfff + (a>>13)&1
	a &^= 0x1fff
	return uint16(sign>>16 | (a-rebias)>>13), math.Float32frombits(sign | a)
}

// decodeRow writes scale × half[i] into dst.
func decodeRow(dst []float32, half []uint16, scale float32) {
	dst = dst[:len(half)]
	for i, h := range half {
		dst[i] = fromHalf(h) * scale
	}
}

// fromHalf is the value of the half-precision h: bit operations for zeros and normal values, the float16 package
// for subnormals, infinities and NaN.
func fromHalf(h uint16) float32 {
	sign, exp := uint32(h&0x8000)<<16, uint32(h>>10)&0x1f
	switch {
	case exp == 0 && h&0x3ff == 0:
		return math.Float32frombits(sign)
	case exp == 0 || exp == 0x1f:
		return float16.Frombits(h).Float32()
	}
	return math.Float32frombits(sign | (exp+112)<<23 | uint32(h&0x3ff)<<13)
}

// storedRow reports whether half and scale are a row encodeRow could have written (every component finite and
// at most 1 in magnitude, the scale finite and not negative) and, with q8 non-nil, writes its int8 copy as
// encodeRow does.
func storedRow(q8 []int8, half []uint16, scale float32) bool {
	if !(scale >= 0 && scale <= math.MaxFloat32) {
		return false
	}
	for i, h := range half {
		if h&0x7fff > 0x3c00 { // above 1.0, or an infinity or NaN
			return false
		}
		if q8 != nil {
			q8[i] = roundHalf127(fromHalf(h))
		}
	}
	return true
}

// maxAbs is the largest |v[i]|, or NaN if v holds one.
func maxAbs(v []float32) float32 {
	var m float32
	for _, x := range v {
		// Plain comparisons: the float max builtin orders NaN and signed zeros, and costs several times more.
		if a := abs32(x); a > m {
			m = a
		} else if a != a {
			return a
		}
	}
	return m
}

// dotF16Generic is the portable dot product of q and the half-precision row r[:len(q)], with four accumulators
// to break the add dependency chain.
func dotF16Generic(q []float32, r []uint16) float32 {
	r = r[:len(q)]
	h := func(i int) float32 { return float16.Frombits(r[i]).Float32() }
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= len(q); i += 8 {
		s0 += q[i]*h(i) + q[i+4]*h(i+4)
		s1 += q[i+1]*h(i+1) + q[i+5]*h(i+5)
		s2 += q[i+2]*h(i+2) + q[i+6]*h(i+6)
		s3 += q[i+3]*h(i+3) + q[i+7]*h(i+7)
	}
	for ; i < len(q); i++ {
		s0 += q[i] * h(i)
	}
	return (s0 + s1) + (s2 + s3)
}

// dotBatchF16Generic sets out[i] to q · half row i of rows (rows is len(q)-strided).
func dotBatchF16Generic(q []float32, rows []uint16, out []float32) {
	dim := len(q)
	for i := range out {
		out[i] = dotF16Generic(q, rows[i*dim:(i+1)*dim])
	}
}

// EncodeHalf writes v into half (len(v) components) as the index stores a row, and returns the row's scale:
// v[i] ≈ scale × half[i]. Records keep embeddings this way (storage), so the index rebuilds from them the very
// rows it had: a row encoded from DecodeHalf's output is the same half row with the same scale.
func EncodeHalf(half []uint16, v []float32) float32 { return encodeRow(half, nil, v) }

// DecodeHalf writes scale × half[i] into dst (len(half) components), undoing EncodeHalf. It reports false,
// writing nothing, when half and scale are not a row EncodeHalf could have written (a component above 1 in
// magnitude or not finite, the scale negative or not finite).
func DecodeHalf(dst []float32, half []uint16, scale float32) bool {
	if !storedRow(nil, half, scale) {
		return false
	}
	decodeRow(dst, half, scale)
	return true
}
