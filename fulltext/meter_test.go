package fulltext

import (
	"strings"
	"testing"
)

// Indexes sharing a Meter add their caches' bytes, hits and misses to it, a closed index takes its bytes off
// (without counting them as evictions), and entries pushed out by others count as evictions.
func TestMeterSumsCaches(t *testing.T) {
	m := NewMeter()
	open := func(decoded int64) *Index {
		ix, err := Open(t.TempDir(), Options{SettleAfter: -1, MaxSegmentsPerTier: 50, DenseMinPostings: 100,
			DecodedPostingsMin: 1, DecodedPostingsCache: decoded, Meter: m})
		if err != nil {
			t.Fatal(err)
		}
		denseCorpus(t, ix, "big", "other")
		ix.WaitPersisted()
		return ix
	}
	a, b := open(64<<20), open(64<<20)
	q := Query{UserID: "big", Text: "coffee morning", K: 6}
	mustSearch(t, a, q)
	misses := m.DecodedPostings.Misses()
	if misses == 0 || m.DecodedPostings.Bytes() == 0 || m.UserPostings.Bytes() == 0 {
		t.Fatalf("after a dense search: %d misses, %d decoded bytes, %d user bytes; want all above 0",
			misses, m.DecodedPostings.Bytes(), m.UserPostings.Bytes())
	}
	one := m.Bytes()
	mustSearch(t, a, q)
	if m.DecodedPostings.Hits() == 0 || m.UserPostings.Hits() == 0 || m.DecodedPostings.Misses() != misses {
		t.Errorf("the same search again: %d/%d hits, %d misses (%d before)", m.DecodedPostings.Hits(),
			m.UserPostings.Hits(), m.DecodedPostings.Misses(), misses)
	}
	mustSearch(t, b, q)
	if held := a.users.bytes + a.decoded.bytes + b.users.bytes + b.decoded.bytes; m.Bytes() != int64(held) {
		t.Errorf("two indexes: the meter says %d bytes, their caches hold %d", m.Bytes(), held)
	}
	one = m.Bytes() - int64(b.users.bytes+b.decoded.bytes)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if m.Bytes() != one || m.DecodedPostings.Evictions() != 0 {
		t.Errorf("one index closed: %d bytes (want %d), %d evictions (want 0)", m.Bytes(), one, m.DecodedPostings.Evictions())
	}
	a.decoded.add(termKey{1, "late"}, make([]uint64, 8)) // a search that was under way as the index closed
	if m.Bytes() != one {
		t.Errorf("a list kept after the close: %d bytes, want %d", m.Bytes(), one)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if m.Bytes() != 0 {
		t.Errorf("both closed: %d bytes held", m.Bytes())
	}

	// A bound that holds a few lists: the words of several queries push the first ones out.
	small := open(256 << 10)
	defer small.Close()
	for _, user := range []string{"big", "other"} {
		for i := range denseVocab {
			mustSearch(t, small, Query{UserID: user, Text: strings.Join(denseVocab[i:min(i+3, len(denseVocab))], " "), K: 6})
		}
	}
	if m.DecodedPostings.Evictions() == 0 || m.DecodedPostings.Bytes() > 256<<10 {
		t.Errorf("%d evictions, %d decoded bytes under a bound of 256 KiB", m.DecodedPostings.Evictions(), m.DecodedPostings.Bytes())
	}
}
