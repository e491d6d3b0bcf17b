//go:build !amd64 || purego

package vector

// streamSum returns the sum of x.
func streamSum(x []float32) float32 { return sumGeneric(x) }
