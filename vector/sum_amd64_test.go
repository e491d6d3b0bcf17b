//go:build amd64 && !purego

package vector

// sumAVX2 is in sum_amd64.s; only benchmarks use it.
//
//go:noescape
func sumAVX2(x *float32, n int) float32

// streamSum returns the sum of x; len(x) must be a multiple of 32.
func streamSum(x []float32) float32 {
	if !hasAVX2 {
		return sumGeneric(x)
	}
	return sumAVX2(&x[0], len(x))
}
