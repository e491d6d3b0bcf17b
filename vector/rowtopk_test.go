package vector

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// The quantized scan's row buffer keeps what the id heap keeps, ties broken by id, with and without a filter.
func TestRowTopKMatchesTopK(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		n, k := 1+rng.IntN(5000), 1+rng.IntN(300)
		ids := make([]string, n)
		for i, p := range rng.Perm(n) {
			ids[i] = fmt.Sprintf("id%05d", p) // rows in no id order
		}
		scores := make([]float32, n)
		for i := range scores {
			scores[i] = float32(rng.IntN(30)) // many ties
		}
		var filter func(string) bool
		if rng.IntN(2) == 0 {
			filter = func(id string) bool { return id[len(id)-1] != '3' }
		}
		want := newTopK(k)
		got := newRowTopK(k, ids)
		for base := 0; base < n; base += blockRows {
			m := min(blockRows, n-base)
			offerBlock(want, scores[base:base+m], ids[base:base+m], filter)
			offerRows(got, scores[base:base+m], base, filter)
		}
		kept := got.best()
		hits := make([]Hit, len(kept))
		for i, h := range kept {
			hits[i] = Hit{ID: ids[h.row], Score: h.score}
		}
		slices.SortFunc(hits, func(a, b Hit) int {
			if better(a, b) {
				return -1
			}
			return 1
		})
		if w := want.sorted(); !slices.Equal(hits, w) {
			t.Fatalf("n=%d k=%d: rows kept %v, want %v", n, k, hits, w)
		}
	}
}

// On the quantized path too, equal scores come back in id order, whatever order the rows were written in, when
// one goroutine scans and when several do.
func TestQuantTiesBrokenByID(t *testing.T) {
	for _, o := range []Options{{}, {ParallelMin: 1000, Workers: 3}} {
		quantTies(t, NewWithOptions(64, o))
	}
}

func quantTies(t *testing.T, ix *Index) {
	const dim = 64
	v := make([]float32, dim)
	v[0] = 1
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range rng.Perm(3000) {
		if err := ix.Upsert("u", fmt.Sprintf("id%05d", p), v); err != nil {
			t.Fatal(err)
		}
	}
	if !ix.quant {
		t.Fatal("index not quantized")
	}
	hits := ix.Search("u", v, 5, nil)
	var got []string
	for _, h := range hits {
		got = append(got, h.ID)
	}
	if want := []string{"id00000", "id00001", "id00002", "id00003", "id00004"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
