package vector

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var benchDims = []int{256, 384, 768}

// BenchmarkDot compares the kernels on one row (call overhead included) and
// on a 256-row block, the unit scan uses. Bytes are row bytes scored.
func BenchmarkDot(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, dim := range benchDims {
		q, rows := randUnit(r, dim), randVec(r, dim*blockRows)
		half, out := make([]uint16, dim*blockRows), make([]float32, blockRows)
		for i := range blockRows {
			encodeRow(half[i*dim:(i+1)*dim], nil, rows[i*dim:(i+1)*dim])
		}
		// half-precision kernels; bytes are the half row bytes scored.
		b.Run(fmt.Sprintf("dim=%d/kernel=f16", dim), func(b *testing.B) {
			b.SetBytes(int64(dim * 2))
			for b.Loop() {
				out[0] = dotF16(q, half)
			}
		})
		b.Run(fmt.Sprintf("dim=%d/kernel=f16-go", dim), func(b *testing.B) {
			b.SetBytes(int64(dim * 2))
			for b.Loop() {
				out[0] = dotF16Generic(q, half)
			}
		})
		b.Run(fmt.Sprintf("dim=%d/kernel=f16-batch256", dim), func(b *testing.B) {
			b.SetBytes(int64(dim * 2 * blockRows))
			for b.Loop() {
				dotBatchF16(q, half, out)
			}
		})
		q8, rows8, out32 := newI8Query(q), make([]int8, dim*blockRows), make([]int32, blockRows)
		for i := range blockRows {
			quantize(rows8[i*dim:(i+1)*dim], rows[i*dim:(i+1)*dim])
		}
		// int8 kernels; bytes are the int8 row bytes scored.
		b.Run(fmt.Sprintf("dim=%d/kernel=i8-batch256", dim), func(b *testing.B) {
			b.SetBytes(int64(dim * blockRows))
			for b.Loop() {
				dotBatchI8(q8, rows8, out32)
			}
		})
		b.Run(fmt.Sprintf("dim=%d/kernel=i8-go-batch256", dim), func(b *testing.B) {
			b.SetBytes(int64(dim * blockRows))
			for b.Loop() {
				dotBatchI8Generic(q8.wide, rows8, out32)
			}
		})
	}
}

// benchIndex builds one namespace of n random unit vectors quickly.
func benchIndex(b *testing.B, n, dim int, o Options) *Index {
	b.Helper()
	ix := NewWithOptions(dim, o)
	r := rand.New(rand.NewPCG(uint64(n), uint64(dim)))
	v := make([]float32, dim)
	for i := range n {
		for j := range v {
			v[j] = r.Float32() - 0.5 // normalisation does not change the scan cost
		}
		if err := ix.Upsert("user", fmt.Sprint(i), v); err != nil {
			b.Fatal(err)
		}
	}
	return ix
}

// BenchmarkSearch is a top-10 search of one user's namespace, with the
// default quantized scan (mode=q8) and with Options.Exact (mode=exact).
// Bytes are the float32 vector bytes of the namespace (n × dim × 4) in both
// modes, so B/s is "float32 data searched per second" and compares directly
// with BenchmarkMemoryBandwidth; q8 reads a quarter of that plus the
// re-ranked rows. p50-ms and p99-ms are percentiles of the individual
// searches in the run; recall@10 (q8 only) is the mean overlap of the q8
// top-10 with the exact top-10 over the 64 benchmark queries.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, dim := range benchDims {
			for _, mode := range []string{"q8", "exact"} {
				benchSearch(b, fmt.Sprintf("n=%dk/dim=%d/mode=%s", n/1000, dim, mode), n, dim, Options{Exact: mode == "exact"})
			}
		}
	}
	// Single goroutine at the target size, to compare with one-thread bandwidth.
	benchSearch(b, "n=100k/dim=256/mode=q8/workers=1", 100_000, 256, Options{Workers: 1})
	benchSearch(b, "n=100k/dim=256/mode=exact/workers=1", 100_000, 256, Options{Workers: 1, Exact: true})
	// The retrieval pipeline asks each side for 100 candidates.
	benchSearchK(b, "n=100k/dim=256/mode=q8/k=100", 100_000, 256, 100, Options{})
}

// benchSearch builds its index inside b.Run, so a -bench filter skips the
// build of unselected sizes; b.Loop runs the closure once and excludes the build.
func benchSearch(b *testing.B, name string, n, dim int, o Options) {
	benchSearchK(b, name, n, dim, 10, o)
}

func benchSearchK(b *testing.B, name string, n, dim, k int, o Options) {
	b.Run(name, func(b *testing.B) {
		ix := benchIndex(b, n, dim, o)
		r := rand.New(rand.NewPCG(7, 7))
		qs := make([][]float32, 64)
		for i := range qs {
			qs[i] = randUnit(r, dim)
		}
		recall := -1.0 // b.Loop's first call resets reported metrics, so report after it
		if ix.quant {
			var hit int
			for _, q := range qs {
				want := map[string]bool{}
				for _, h := range ix.search("user", q, 10, nil, false) {
					want[h.ID] = true
				}
				for _, h := range ix.search("user", q, 10, nil, true) {
					if want[h.ID] {
						hit++
					}
				}
			}
			recall = float64(hit) / float64(10*len(qs))
		}
		b.SetBytes(int64(n * dim * 4))
		var lat []time.Duration
		for i := 0; b.Loop(); i++ {
			start := time.Now()
			if hits := ix.Search("user", qs[i%len(qs)], k, nil); len(hits) != k {
				b.Fatalf("%d hits", len(hits))
			}
			lat = append(lat, time.Since(start))
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
		if recall >= 0 {
			b.ReportMetric(recall, "recall@10")
		}
		b.ReportMetric(float64(lat[len(lat)*99/100])/1e6, "p99-ms")
	})
	runtime.GC() // release this index's slab before the next is built
}

// BenchmarkSearchConcurrent is the retrieval pipeline's search (k = 100) of one user's 100k random 256-d vectors
// by 4 × GOMAXPROCS goroutines at once, as a shard leader under many clients runs it: ns/op is the time a search
// takes of the machine, splitting and merging included.
func BenchmarkSearchConcurrent(b *testing.B) {
	ix := benchIndex(b, 100_000, 256, Options{})
	r := rand.New(rand.NewPCG(8, 8))
	qs := make([][]float32, 64)
	for i := range qs {
		qs[i] = randUnit(r, 256)
	}
	var next atomic.Int64
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if hits := ix.Search("user", qs[next.Add(1)%int64(len(qs))], 100, nil); len(hits) != 100 {
				b.Errorf("%d hits", len(hits))
			}
		}
	})
}

// BenchmarkMemoryBandwidth stream-sums a 256 MiB float32 slice (far larger
// than the caches) with one goroutine and with GOMAXPROCS goroutines, each
// summing a contiguous part, the same split Search uses.
func BenchmarkMemoryBandwidth(b *testing.B) {
	x := make([]float32, 64<<20)
	for i := range x {
		x[i] = 1
	}
	for _, threads := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			b.SetBytes(int64(len(x) * 4))
			for b.Loop() {
				parallelSum(x, threads)
			}
		})
	}
}

func parallelSum(x []float32, threads int) float32 {
	sums := make([]float32, threads)
	var wg sync.WaitGroup
	for t := range threads {
		lo, hi := len(x)*t/threads&^31, len(x)*(t+1)/threads&^31
		wg.Go(func() { sums[t] = streamSum(x[lo:hi]) })
	}
	wg.Wait()
	var s float32
	for _, v := range sums {
		s += v
	}
	return s
}
