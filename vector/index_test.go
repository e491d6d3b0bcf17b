package vector

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fill upserts n random unit vectors into ns and returns them by id.
func fill(t testing.TB, ix *Index, r *rand.Rand, ns string, n int) map[string][]float32 {
	t.Helper()
	vecs := make(map[string][]float32, n)
	for i := range n {
		id := fmt.Sprintf("%s-%d", ns, i)
		vecs[id] = randUnit(r, ix.Dim())
		if err := ix.Upsert(ns, id, vecs[id]); err != nil {
			t.Fatal(err)
		}
	}
	return vecs
}

func checkSearch(t *testing.T, ix *Index, ns string, vecs map[string][]float32, q []float32, k int, filter func(string) bool) {
	t.Helper()
	got := ix.Search(ns, q, k, filter)
	want := naiveSearch(vecs, q, k, filter)
	if len(want) == 0 {
		want = nil
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ns %s k %d: got %v\nwant %v", ns, k, got, want)
	}
}

func TestSearchMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, dim := range []int{3, 17, 64, 256, 385} {
		for _, opts := range []Options{{}, {ParallelMin: 50, Workers: 3}} {
			ix := NewWithOptions(dim, opts)
			a := fill(t, ix, r, "a", 500)
			fill(t, ix, r, "b", 300) // must never leak into a's results
			for _, k := range []int{1, 5, 10, 499, 500, 1000} {
				checkSearch(t, ix, "a", a, randUnit(r, dim), k, nil)
			}
		}
	}
}

func TestFilter(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, opts := range []Options{{}, {ParallelMin: 50, Workers: 4}} {
		ix := NewWithOptions(32, opts)
		vecs := fill(t, ix, r, "u", 400)
		even := func(id string) bool { return (id[len(id)-1]-'0')%2 == 0 }
		checkSearch(t, ix, "u", vecs, randUnit(r, 32), 20, even)
		none := func(string) bool { return false }
		if hits := ix.Search("u", randUnit(r, 32), 5, none); len(hits) != 0 {
			t.Fatalf("filter rejecting all: %v", hits)
		}
	}
}

func TestTiesBrokenByID(t *testing.T) {
	ix := New(4)
	v := []float32{1, 0, 0, 0}
	for _, id := range []string{"d", "b", "a", "c", "e"} {
		if err := ix.Upsert("u", id, v); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	for _, h := range ix.Search("u", v, 3, nil) {
		ids = append(ids, h.ID)
	}
	if got := strings.Join(ids, ","); got != "a,b,c" {
		t.Fatalf("got %s, want a,b,c", got)
	}
}

// TestRandomOps drives upserts, replaces, deletes and drops against a map
// model and checks the full contents after each round through Search.
func TestRandomOps(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	const dim = 12
	ix := New(dim)
	model := map[string]map[string][]float32{}
	for range 30 {
		for range 200 {
			ns, id := fmt.Sprint("n", r.IntN(3)), fmt.Sprint("i", r.IntN(60))
			switch op := r.IntN(10); {
			case op < 6:
				v := randUnit(r, dim)
				if err := ix.Upsert(ns, id, v); err != nil {
					t.Fatal(err)
				}
				if model[ns] == nil {
					model[ns] = map[string][]float32{}
				}
				model[ns][id] = append([]float32(nil), v...)
				v[0] = 42 // Upsert must have copied; the model holds the original
			case op < 9:
				_, want := model[ns][id]
				if got := ix.Delete(ns, id); got != want {
					t.Fatalf("Delete(%s,%s) = %v, want %v", ns, id, got, want)
				}
				delete(model[ns], id)
			default:
				ix.DropNamespace(ns)
				delete(model, ns)
			}
		}
		checkModel(t, ix, r, model)
	}
}

func checkModel(t *testing.T, ix *Index, r *rand.Rand, model map[string]map[string][]float32) {
	t.Helper()
	total := 0
	for ns := range 3 {
		name := fmt.Sprint("n", ns)
		vecs := model[name]
		total += len(vecs)
		if got := ix.NamespaceLen(name); got != len(vecs) {
			t.Fatalf("NamespaceLen(%s) = %d, want %d", name, got, len(vecs))
		}
		checkSearch(t, ix, name, vecs, randUnit(r, ix.Dim()), 1000, nil)
	}
	if ix.Len() != total {
		t.Fatalf("Len = %d, want %d", ix.Len(), total)
	}
}

func TestErrors(t *testing.T) {
	ix := New(8)
	if err := ix.Upsert("u", "x", make([]float32, 7)); !errors.Is(err, ErrDimension) {
		t.Fatalf("short vector: %v", err)
	}
	if err := ix.Upsert("u", "x", make([]float32, 9)); !errors.Is(err, ErrDimension) {
		t.Fatalf("long vector: %v", err)
	}
	if err := ix.Upsert("u", "", make([]float32, 8)); !errors.Is(err, ErrEmptyID) {
		t.Fatalf("empty id: %v", err)
	}
	if ix.Len() != 0 || ix.NamespaceLen("u") != 0 {
		t.Fatal("failed upserts stored something")
	}
	if hits := ix.Search("u", make([]float32, 7), 3, nil); hits != nil {
		t.Fatalf("wrong-dimension query: %v", hits)
	}
	if hits := ix.Search("nobody", make([]float32, 8), 3, nil); hits != nil {
		t.Fatalf("unknown namespace: %v", hits)
	}
	if hits := ix.Search("u", make([]float32, 8), 0, nil); hits != nil {
		t.Fatalf("k=0: %v", hits)
	}
}

func TestNewPanicsOnBadDim(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("New(0) did not panic")
		}
	}()
	New(0)
}

// TestConcurrent is for -race: writers, deleters, droppers and searchers on
// overlapping namespaces, with parallel scans forced by a low ParallelMin,
// at dim 16 (float32 scan only) and dim 64 (int8 scan with re-rank once a
// namespace has more than 80 rows).
func TestConcurrent(t *testing.T) {
	for _, dim := range []int{16, 64} {
		t.Run(fmt.Sprint("dim=", dim), func(t *testing.T) { testConcurrent(t, dim) })
	}
}

func testConcurrent(t *testing.T, dim int) {
	ix := NewWithOptions(dim, Options{ParallelMin: 64, Workers: 3})
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for i := range 2000 {
				ns, id := fmt.Sprint("n", r.IntN(3)), fmt.Sprint(r.IntN(300))
				switch r.IntN(20) {
				case 0:
					ix.DropNamespace(ns)
				case 1, 2, 3:
					ix.Delete(ns, id)
				case 4, 5, 6, 7, 8, 9:
					if err := ix.Upsert(ns, id, randUnit(r, dim)); err != nil {
						t.Error(err)
					}
				default:
					hits := ix.Search(ns, randUnit(r, dim), 10, func(string) bool { return i%2 == 0 })
					for j := 1; j < len(hits); j++ {
						if better(hits[j], hits[j-1]) {
							t.Errorf("hits out of order: %v", hits)
						}
					}
				}
			}
		})
	}
	wg.Wait()
	sum := 0
	for ns := range 3 {
		sum += ix.NamespaceLen(fmt.Sprint("n", ns))
	}
	if sum != ix.Len() {
		t.Fatalf("Len %d, namespaces hold %d", ix.Len(), sum)
	}
}

func TestShrinkKeepsContents(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	ix := New(8)
	vecs := fill(t, ix, r, "u", 5000)
	for id := range vecs {
		if len(vecs) == 100 {
			break
		}
		ix.Delete("u", id)
		delete(vecs, id)
	}
	checkSearch(t, ix, "u", vecs, randUnit(r, 8), 1000, nil)
	for id := range vecs {
		ix.Delete("u", id)
	}
	if ix.Len() != 0 || ix.NamespaceLen("u") != 0 {
		t.Fatalf("Len %d after deleting all", ix.Len())
	}
}

// TestUpsertManyMatchesUpsert: a bulk upsert (new ids and replacements, over several calls) leaves the index as
// one Upsert per vector does: the same counts and the same search results; a bad vector stores none of its call.
func TestUpsertManyMatchesUpsert(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	const dim = 64
	one, many := New(dim), New(dim)
	vecs := map[string][]float32{}
	for round := range 4 {
		var ids []string
		var vs [][]float32
		for i := range 300 {
			id := fmt.Sprintf("m-%d", (round*200+i)%700) // later rounds replace some earlier ids
			v := randUnit(r, dim)
			ids, vs, vecs[id] = append(ids, id), append(vs, v), v
			if err := one.Upsert("u", id, v); err != nil {
				t.Fatal(err)
			}
		}
		if err := many.UpsertMany("u", ids, vs); err != nil {
			t.Fatal(err)
		}
	}
	if many.Len() != one.Len() || many.NamespaceLen("u") != len(vecs) {
		t.Fatalf("len: many %d one %d, namespace %d, want %d", many.Len(), one.Len(), many.NamespaceLen("u"), len(vecs))
	}
	for range 20 {
		q := randUnit(r, dim)
		if got, want := many.Search("u", q, 10, nil), one.Search("u", q, 10, nil); !reflect.DeepEqual(got, want) {
			t.Fatalf("search: %v, want %v", got, want)
		}
		checkSearch(t, many, "u", vecs, q, 10, nil)
	}
	err := many.UpsertMany("u", []string{"new-1", "new-2"}, [][]float32{randUnit(r, dim), make([]float32, dim-1)})
	if !errors.Is(err, ErrDimension) || many.NamespaceLen("u") != len(vecs) {
		t.Fatalf("bad vector: %v, namespace %d", err, many.NamespaceLen("u"))
	}
}

// topK keeps exactly the k best of what it is offered, ties broken by id, in any offer order.
func TestTopKKeepsTheBest(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 4))
	for range 500 {
		n, k := rng.IntN(300), 1+rng.IntN(40)
		all := make([]Hit, n)
		for i := range all {
			all[i] = Hit{ID: fmt.Sprintf("id%03d", rng.IntN(1000)), Score: float32(rng.IntN(20))} // many ties
		}
		tk := newTopK(k)
		for _, h := range all {
			tk.offer(h)
		}
		want := slices.Clone(all)
		slices.SortFunc(want, func(a, b Hit) int {
			if better(a, b) {
				return -1
			}
			if better(b, a) {
				return 1
			}
			return 0
		})
		want = want[:min(k, n)]
		if got := tk.sorted(); !slices.Equal(got, want) {
			t.Fatalf("n=%d k=%d: kept %v, want %v", n, k, got, want)
		}
	}
}

// Rows hands out every vector of a namespace as stored (in half precision, scaled back), after replacements and
// deletes.
func TestRowsListsTheNamespace(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	ix := New(16)
	vecs := fill(t, ix, r, "u", 50)
	fill(t, ix, r, "other", 5)
	for i := range 10 {
		id := fmt.Sprintf("u-%d", i*3)
		ix.Delete("u", id)
		delete(vecs, id)
	}
	vecs["u-1"] = randUnit(r, 16)
	if err := ix.Upsert("u", "u-1", vecs["u-1"]); err != nil {
		t.Fatal(err)
	}
	got := map[string][]float32{}
	ix.Rows("u", func(id string, v []float32) { got[id] = slices.Clone(v) })
	for id, v := range vecs {
		vecs[id] = asStored(v)
	}
	if !reflect.DeepEqual(got, vecs) {
		t.Fatalf("rows: %d, want %d", len(got), len(vecs))
	}
	ix.Rows("nobody", func(string, []float32) { t.Fatal("a row of a missing namespace") })
}

// Load into an empty namespace adopts the slab and searches as Upsert would; into a filled one it is UpsertMany.
func TestLoadMatchesUpsert(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	const dim = 32
	one, loaded := New(dim), New(dim)
	vecs := map[string][]float32{}
	var ids []string
	var slab []float32
	for i := range 200 {
		id := fmt.Sprintf("m-%d", i)
		v := randUnit(r, dim)
		vecs[id], ids, slab = v, append(ids, id), append(slab, v...)
		if err := one.Upsert("u", id, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := loaded.Load("u", ids, slab); err != nil {
		t.Fatal(err)
	}
	more := randUnit(r, dim)
	vecs["m-3"] = more
	if err := one.Upsert("u", "m-3", more); err != nil {
		t.Fatal(err)
	}
	if err := loaded.Load("u", []string{"m-3"}, slices.Clone(more)); err != nil {
		t.Fatal(err)
	}
	if loaded.Len() != 200 || loaded.NamespaceLen("u") != 200 {
		t.Fatalf("len %d, namespace %d", loaded.Len(), loaded.NamespaceLen("u"))
	}
	for range 10 {
		q := randUnit(r, dim)
		if got, want := loaded.Search("u", q, 10, nil), one.Search("u", q, 10, nil); !reflect.DeepEqual(got, want) {
			t.Fatalf("search: %v, want %v", got, want)
		}
		checkSearch(t, loaded, "u", vecs, q, 10, nil)
	}
	for _, bad := range []struct {
		ids  []string
		slab []float32
	}{{[]string{"a"}, make([]float32, dim-1)}, {[]string{""}, make([]float32, dim)}, {[]string{"a", "a"}, make([]float32, 2*dim)}} {
		if err := loaded.Load("v", bad.ids, bad.slab); err == nil || loaded.NamespaceLen("v") != 0 {
			t.Fatalf("load of %v: %v", bad.ids, err)
		}
	}
}

// A search splits its scan only while it is the only one scanning the Meter's indexes.
func TestScanSplitsOnlyAlone(t *testing.T) {
	o := Options{ParallelMin: 1000, Workers: 4}.withDefaults()
	for _, c := range []struct {
		rows     int
		scanning int32
		want     int
	}{{100_000, 1, 4}, {100_000, 2, 1}, {100_000, 8, 1}, {999, 1, 1}, {1000, 1, 2}} {
		if got := o.workers(c.rows, c.scanning); got != c.want {
			t.Errorf("%d rows, %d scanning: %d workers, want %d", c.rows, c.scanning, got, c.want)
		}
	}
	// The count goes back down after every search, parallel or not.
	m := NewMeter()
	ix := NewWithOptions(64, Options{ParallelMin: 64, Workers: 3, Meter: m})
	for i := range 500 {
		v := make([]float32, 64)
		v[i%64] = 1
		if err := ix.Upsert("u", fmt.Sprint(i), v); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { ix.Search("u", make([]float32, 64), 10, nil) })
	}
	wg.Wait()
	if n := m.scanning.Load(); n != 0 {
		t.Fatalf("%d searches still counted as scanning", n)
	}
}
