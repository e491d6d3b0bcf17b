package fulltext

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// modes runs f against an on-disk and an in-memory index.
func modes(t *testing.T, f func(t *testing.T, ix *Index)) {
	t.Helper()
	for _, mem := range []bool{false, true} {
		name := "disk"
		if mem {
			name = "memory"
		}
		t.Run(name, func(t *testing.T) {
			f(t, openTest(t, t.TempDir(), Options{InMemory: mem}))
		})
	}
}

func openTest(t testing.TB, dir string, opts Options) *Index {
	t.Helper()
	ix, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	return ix
}

func mustApply(t testing.TB, ix *Index, put []Doc, del ...string) {
	t.Helper()
	if err := ix.Apply(put, del); err != nil {
		t.Fatalf("Apply: %v", err)
	}
}

func mustSearch(t testing.TB, ix *Index, q Query) []Hit {
	t.Helper()
	hits, err := ix.Search(q)
	if err != nil {
		t.Fatalf("Search(%+v): %v", q, err)
	}
	return hits
}

func ids(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func sameSet(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	seen := map[string]int{}
	for _, g := range got {
		seen[g]++
	}
	for _, w := range want {
		if seen[w] == 0 {
			return false
		}
		seen[w]--
	}
	return true
}

func docID(user string, i int) string { return fmt.Sprintf("%s-%06d", user, i) }

// inRange keeps the docs docID made for numbers in [lo, hi), as an owner's time check would keep the docs of a
// time range.
func inRange(lo, hi int) func(id string) bool {
	return func(id string) bool {
		n, err := strconv.Atoi(id[strings.LastIndexByte(id, '-')+1:])
		return err == nil && n >= lo && n < hi
	}
}
