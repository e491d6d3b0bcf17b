package vector

// sumGeneric sums x with eight accumulators, the portable bandwidth yardstick.
func sumGeneric(x []float32) float32 {
	var s [8]float32
	i := 0
	for ; i+8 <= len(x); i += 8 {
		c := x[i : i+8 : i+8]
		s[0] += c[0]
		s[1] += c[1]
		s[2] += c[2]
		s[3] += c[3]
		s[4] += c[4]
		s[5] += c[5]
		s[6] += c[6]
		s[7] += c[7]
	}
	for ; i < len(x); i++ {
		s[0] += x[i]
	}
	return (s[0] + s[1] + s[2] + s[3]) + (s[4] + s[5] + s[6] + s[7])
}
