package vector

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// i8TestDims covers every tail around the 16- and 64-byte blocks and the
// production dimensions with odd neighbours.
func i8TestDims() []int {
	var d []int
	for i := 1; i <= 140; i++ {
		d = append(d, i)
	}
	return append(d, 191, 192, 193, 255, 256, 257, 383, 384, 385, 767, 768, 769, 1000, 1536, 4096)
}

func randI8(r *rand.Rand, n int) []int8 {
	v := make([]int8, n)
	for i := range v {
		v[i] = int8(r.IntN(256) - 128)
	}
	return v
}

func randI16(r *rand.Rand, n, m int) []int16 {
	v := make([]int16, n)
	for i := range v {
		v[i] = int16(r.IntN(2*m+1) - m)
	}
	return v
}

// TestDotI8BatchMatchesReference checks the dispatched kernel (asm or Go)
// against a plain int64 loop.
func TestDotI8BatchMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, dim := range i8TestDims() {
		const rows = 7
		q, slab := i8QueryOf(randI8(r, dim)), randI8(r, dim*rows)
		out := make([]int32, rows)
		dotBatchI8(q, slab, out)
		for i, got := range out {
			var want int64
			for j, x := range q.narrow {
				want += int64(x) * int64(slab[i*dim+j])
			}
			if int64(got) != want {
				t.Fatalf("dim %d row %d: got %d, want %d", dim, i, got, want)
			}
		}
	}
}

func TestQuantizeError(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, dim := range []int{1, 3, 64, 256, 768} {
		for range 20 {
			v := randVec(r, dim)
			q := make([]int8, dim)
			s := quantize(q, v)
			for i := range v {
				if q[i] < -127 {
					t.Fatalf("dim %d: -128 stored", dim)
				}
				if d := math.Abs(float64(v[i]) - float64(s)*float64(q[i])); d > float64(s)*0.5001 {
					t.Fatalf("dim %d comp %d: %v quantized to %d*%v", dim, i, v[i], q[i], s)
				}
			}
		}
	}
	q := []int8{5, 5}
	if s := quantize(q, []float32{0, 0}); s != 0 || q[0] != 0 || q[1] != 0 {
		t.Fatalf("zero vector: scale %v, %v", s, q)
	}
	if s := quantize(q, []float32{float32(math.NaN()), 1}); s != 0 {
		t.Fatalf("NaN vector: scale %v", s)
	}
}

// TestQuantSearchExactScores checks, on a quantized index, that every hit
// carries the score of its vector as stored, hits are in order, filters
// apply, and with a generous re-rank the result equals the exact search.
func TestQuantSearchExactScores(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for _, dim := range []int{64, 100, 256, 385} {
		for _, opts := range []Options{{}, {ParallelMin: 200, Workers: 3}} {
			ix := NewWithOptions(dim, opts)
			vecs := fill(t, ix, r, "a", 3000)
			fill(t, ix, r, "b", 300)
			for _, k := range []int{1, 5, 10, 50} {
				q := randUnit(r, dim)
				for _, filter := range []func(string) bool{nil, func(id string) bool { return id[len(id)-1]%3 == 0 }} {
					got := ix.Search("a", q, k, filter)
					want := naiveSearch(vecs, q, k, filter)
					if len(got) != len(want) {
						t.Fatalf("dim %d k %d: %d hits, want %d", dim, k, len(got), len(want))
					}
					for i, h := range got {
						if h.Score != storedScore(q, vecs[h.ID]) {
							t.Fatalf("dim %d: hit %v, exact score %v", dim, h, storedScore(q, vecs[h.ID]))
						}
						if filter != nil && !filter(h.ID) {
							t.Fatalf("filtered id %s returned", h.ID)
						}
						if i > 0 && better(h, got[i-1]) {
							t.Fatalf("out of order: %v", got)
						}
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("dim %d k %d: quantized %v\nexact %v", dim, k, got, want)
					}
				}
			}
		}
	}
}

// TestQuantSlabInvariant drives upserts, replaces, deletes (swap-removes)
// and shrinks, then checks every half and int8 row is the encoding of the
// model's vector in the same slot, and that quantized searches agree with the model.
func TestQuantSlabInvariant(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const dim = 64
	ix := NewWithOptions(dim, Options{RerankMin: 4, Rerank: 2})
	model := map[string][]float32{}
	for round := range 20 {
		for range 400 {
			id := fmt.Sprint("i", r.IntN(3000))
			if r.IntN(10) < 6 || round < 3 {
				v := randUnit(r, dim)
				if err := ix.Upsert("u", id, v); err != nil {
					t.Fatal(err)
				}
				model[id] = v
			} else {
				ix.Delete("u", id)
				delete(model, id)
			}
		}
		if round == 15 { // empty most of it so shrink runs
			for id := range model {
				if len(model) < 50 {
					break
				}
				ix.Delete("u", id)
				delete(model, id)
			}
		}
		n := ix.lookup("u")
		n.mu.RLock()
		if len(n.q8) != len(n.ids)*dim || len(n.half) != len(n.ids)*dim || len(n.scale) != len(n.ids) ||
			len(n.ids) != len(model) {
			t.Fatalf("lengths: q8 %d half %d scales %d ids %d model %d", len(n.q8), len(n.half), len(n.scale),
				len(n.ids), len(model))
		}
		for s, id := range n.ids {
			half, q8, sc := stored(model[id])
			if !slices.Equal(n.half[s*dim:(s+1)*dim], half) || sc != n.scale[s] {
				t.Fatalf("slot %d (%s): half row differs from the model's", s, id)
			}
			if !slices.Equal(q8, n.q8[s*dim:(s+1)*dim]) {
				t.Fatalf("slot %d (%s): int8 row not the quantization of its half row", s, id)
			}
		}
		n.mu.RUnlock()
		q := randUnit(r, dim)
		for _, h := range ix.Search("u", q, 3, nil) {
			if h.Score != storedScore(q, model[h.ID]) {
				t.Fatalf("hit %v, exact %v", h, storedScore(q, model[h.ID]))
			}
		}
	}
}

// recall runs queries through the quantized and the exact path of one index
// and returns the fraction of queries whose top-k is identical and the mean
// recall@k.
func recall(ix *Index, ns string, qs [][]float32, k int) (same, mean float64) {
	for _, q := range qs {
		got, want := ix.search(ns, q, k, nil, true), ix.search(ns, q, k, nil, false)
		if reflect.DeepEqual(got, want) {
			same++
		}
		in := map[string]bool{}
		for _, h := range want {
			in[h.ID] = true
		}
		for _, h := range got {
			if in[h.ID] {
				mean++
			}
		}
	}
	return same / float64(len(qs)), mean / float64(len(qs)*k)
}

// dataset is a named generator of n stored vectors and m queries.
type dataset struct {
	name string
	gen  func(r *rand.Rand, dim, n, m int) (vecs, qs [][]float32)
}

func normalize(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// mix returns normalize(Σ w_i * v_i).
func mix(dim int, ws []float32, vs ...[]float32) []float32 {
	out := make([]float32, dim)
	for i, v := range vs {
		for j := range out {
			out[j] += ws[i] * v[j]
		}
	}
	return normalize(out)
}

func recallDatasets() []dataset {
	return []dataset{
		{"random-unit", func(r *rand.Rand, dim, n, m int) (vecs, qs [][]float32) {
			for range n {
				vecs = append(vecs, randUnit(r, dim))
			}
			for range m {
				qs = append(qs, randUnit(r, dim))
			}
			return
		}},
		// Embedding-like: every vector shares a common direction (random
		// texts have cosine ~0.5), belongs to one of 200 topics, and 25% are
		// near-duplicates (cosine ~0.995) of an earlier memory. Queries are
		// paraphrases (cosine ~0.9) of a stored memory, so their top-10 is a
		// tight group of duplicates and same-topic neighbours.
		{"clustered-dups", func(r *rand.Rand, dim, n, m int) (vecs, qs [][]float32) {
			common := randUnit(r, dim)
			topics := make([][]float32, 200)
			for i := range topics {
				topics[i] = randUnit(r, dim)
			}
			for range n {
				if len(vecs) > 0 && r.IntN(4) == 0 {
					vecs = append(vecs, mix(dim, []float32{1, 0.1}, vecs[r.IntN(len(vecs))], randUnit(r, dim)))
					continue
				}
				vecs = append(vecs, mix(dim, []float32{0.7, 0.5, 0.5}, common, topics[r.IntN(len(topics))], randUnit(r, dim)))
			}
			for range m {
				qs = append(qs, mix(dim, []float32{1, 0.5}, vecs[r.IntN(len(vecs))], randUnit(r, dim)))
			}
			return
		}},
		// Hard case: groups of 50 near-duplicates (cosine ~0.998 to the
		// group centre), queries near a centre: the top-10 is 10 of 50 rows
		// whose exact scores differ by about the int8 error.
		{"dup-groups-50", func(r *rand.Rand, dim, n, m int) (vecs, qs [][]float32) {
			common := randUnit(r, dim)
			var centres [][]float32
			for len(vecs) < n {
				c := mix(dim, []float32{0.7, 0.7}, common, randUnit(r, dim))
				centres = append(centres, c)
				for range 50 {
					vecs = append(vecs, mix(dim, []float32{1, 0.06}, c, randUnit(r, dim)))
				}
			}
			for range m {
				qs = append(qs, mix(dim, []float32{1, 0.5}, centres[r.IntN(len(centres))], randUnit(r, dim)))
			}
			return
		}},
	}
}

// TestQuantRecall: with default options, the quantized top-10 must equal the
// exact top-10 (same ids, same exact scores, same order) for >= 99% of
// queries, on random unit vectors and on clustered data with near-duplicates.
func TestQuantRecall(t *testing.T) {
	n, m := 20000, 300
	if testing.Short() || raceEnabled {
		n, m = 5000, 100
	}
	for _, ds := range recallDatasets() {
		for _, dim := range []int{256, 384} {
			r := rand.New(rand.NewPCG(23, uint64(dim)))
			vecs, qs := ds.gen(r, dim, n, m)
			ix := New(dim)
			for i, v := range vecs {
				if err := ix.Upsert("u", fmt.Sprint(i), v); err != nil {
					t.Fatal(err)
				}
			}
			same, mean := recall(ix, "u", qs, 10)
			t.Logf("%s n=%d dim=%d: top-10 identical in %.1f%% of queries, recall@10 %.4f", ds.name, n, dim, 100*same, mean)
			if same < 0.99 {
				t.Errorf("%s dim %d: top-10 identical in only %.1f%% of queries", ds.name, dim, 100*same)
			}
		}
	}
}

// quantizeReference is quantize as first written, through float64 math.Abs and math.Round.
func quantizeReference(dst []int8, v []float32) float32 {
	dst = dst[:len(v)]
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	if m == 0 || m != m || m > math.MaxFloat32 {
		clear(dst)
		return 0
	}
	inv := 127 / m
	for i, x := range v {
		r := math.Round(float64(x * inv))
		dst[i] = int8(min(max(r, -127), 127))
	}
	return m / 127
}

// TestQuantizeMatchesFloat64Rounding: the float32 quantize gives the same int8 rows and scales as the float64
// reference, on random vectors and on values that sit exactly on a rounding half (k + 0.5 after scaling), where
// a different rounding would show.
func TestQuantizeMatchesFloat64Rounding(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	check := func(v []float32) {
		t.Helper()
		got, want := make([]int8, len(v)), make([]int8, len(v))
		gs, ws := quantize(got, v), quantizeReference(want, v)
		if gs != ws || !slices.Equal(got, want) {
			t.Fatalf("v=%v: got %v scale %v, reference %v scale %v", v, got, gs, want, ws)
		}
	}
	for range 20000 {
		v := make([]float32, 1+rng.IntN(300))
		for i := range v {
			v[i] = float32(rng.NormFloat64()) * float32(math.Pow(10, float64(rng.IntN(9)-4)))
		}
		check(v)
	}
	for k := -127; k <= 126; k++ { // max 127 makes inv exactly 1: x*inv = k + 0.5
		check([]float32{127, float32(k) + 0.5, -float32(k) - 0.5, float32(k) + 0.49999997, float32(k) + 0.50000006})
	}
	check([]float32{0, -0, 0})
	check([]float32{float32(math.Inf(-1)), 1})
	check([]float32{1e-45, -1e-45}) // subnormal maximum
	nan := float32(math.NaN())
	check([]float32{1, nan, 3})
	check([]float32{5, 1, nan})
	check([]float32{nan, nan})
}

// BenchmarkQuantize: one 256-d row, as every stored vector (and every vector a restart reloads) is quantized.
func BenchmarkQuantize(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, 256)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	dst := make([]int8, len(v))
	for _, impl := range []struct {
		name string
		f    func([]int8, []float32) float32
	}{{"float32", quantize}, {"float64-reference", quantizeReference}} {
		b.Run(impl.name, func(b *testing.B) {
			for b.Loop() {
				impl.f(dst, v)
			}
		})
	}
}
