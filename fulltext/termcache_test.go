package fulltext

import (
	"testing"

	"github.com/blevesearch/bleve/v2/index/scorch"
)

// termLists keeps a long list decoded as zap's iterator reads it, hands it out again from the cache, and leaves
// short lists and lists over a quarter of its bound to zap.
func TestTermListsDecodeAndKeep(t *testing.T) {
	ix, r := denseSnapshot(t)
	ss := r.(*scorch.IndexSnapshot).Segments()[0]
	term := string(userScope("big")) + "coffe" // "coffee" as the en analyzer stems it
	dict, err := ss.Segment().Dictionary(fieldText)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := dict.PostingsList([]byte(term), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := pl.Count()
	if n < 100 {
		t.Fatalf("only %d postings of %q", n, term)
	}
	var want []uint64
	it := pl.Iterator(true, true, false, nil)
	for p, err := it.Next(); p != nil || err != nil; p, err = it.Next() {
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, p.Number()<<32|p.Frequency()<<16|p.(normBits).NormUint64())
	}

	c := newTermLists(1<<20, 10, nil)
	for run := range 2 {
		got, err := c.of(ss, term, n)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("run %d: %d postings, want %d", run, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("run %d: posting %d is %x, want %x", run, i, got[i], want[i])
			}
		}
	}
	if c.counts.Hits() != 1 || c.lru.Len() != 1 {
		t.Fatalf("%d hits, %d lists kept; want 1 and 1", c.counts.Hits(), c.lru.Len())
	}
	if got, _ := newTermLists(1<<20, int(n)+1, nil).of(ss, term, n); got != nil {
		t.Errorf("a list under the minimum was decoded")
	}
	if got, _ := newTermLists(int64(4*8*n), 1, nil).of(ss, term, n); got != nil {
		t.Errorf("a list over a quarter of the bound was decoded")
	}
	if got, _ := (*termLists)(nil).of(ss, term, n); got != nil {
		t.Errorf("no cache decoded a list")
	}
	_ = ix
}
