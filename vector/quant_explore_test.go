package vector

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// quantGlobal quantizes with the fixed scale 1/127 (safe for any unit vector).
func quantGlobal(dst []int8, v []float32) float32 {
	for i, x := range v {
		dst[i] = int8(min(max(math.Round(float64(x)*127), -127), 127))
	}
	return 1.0 / 127
}

// simRecall: fraction of queries whose exact top-k is inside the top-c by
// approximate score, with quantizer qf.
func simRecall(vecs, qs [][]float32, k, c int, qf func([]int8, []float32) float32) (same float64, errStd float64) {
	dim := len(vecs[0])
	q8 := make([]int8, len(vecs)*dim)
	sc := make([]float32, len(vecs))
	for i, v := range vecs {
		sc[i] = qf(q8[i*dim:(i+1)*dim], v)
	}
	var es, en float64
	for _, q := range qs {
		qq8 := make([]int8, dim)
		qs := qf(qq8, q)
		qq := make([]int16, dim)
		for i := range qq {
			qq[i] = int16(qq8[i])
		}
		type p struct {
			i      int
			ex, ap float32
		}
		all := make([]p, len(vecs))
		for i, v := range vecs {
			ap := float32(dotI8Generic(qq, q8[i*dim:(i+1)*dim])) * sc[i] * qs
			ex := dot(q, v)
			all[i] = p{i, ex, ap}
			d := float64(ap - ex)
			es += d * d
			en++
		}
		byEx := slices.Clone(all)
		sort.Slice(byEx, func(a, b int) bool { return byEx[a].ex > byEx[b].ex })
		sort.Slice(all, func(a, b int) bool { return all[a].ap > all[b].ap })
		in := map[int]bool{}
		for _, x := range all[:c] {
			in[x.i] = true
		}
		ok := true
		for _, x := range byEx[:k] {
			ok = ok && in[x.i]
		}
		if ok {
			same++
		}
	}
	return same / float64(len(qs)), math.Sqrt(es / en)
}

// BenchmarkExploreQuant is the measurement behind the per-vector scale and the
// default candidate count (DESIGN.md): for each dataset, the rms error of the
// int8 score and the fraction of queries whose exact top-10 lies within the
// top-c int8 candidates, for per-vector and global scales. It takes about a
// minute, so it is a benchmark, run on demand:
//
//	go test -run '^$' -bench ExploreQuant -benchtime 1x ./vector/
func BenchmarkExploreQuant(b *testing.B) {
	for _, d := range recallDatasets() {
		r := rand.New(rand.NewPCG(99, 1))
		vecs, qs := d.gen(r, 256, 20000, 100)
		for _, qf := range []struct {
			name string
			f    func([]int8, []float32) float32
		}{{"per-vector", quantize}, {"global-1/127", quantGlobal}} {
			for _, c := range []int{10, 20, 40, 80} {
				same, e := simRecall(vecs, qs, 10, c, qf.f)
				fmt.Printf("%-14s %-13s c=%3d: top-10 in candidates %.2f  score err rms %.5f\n", d.name, qf.name, c, same, e)
			}
		}
	}
}
