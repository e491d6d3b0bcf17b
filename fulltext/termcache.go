package fulltext

import (
	"github.com/blevesearch/bleve/v2/index/scorch"
)

// termLists caches long posting lists of the text field, decoded, for dense scoring (DESIGN.md, "Decoded
// postings"). Walking a list through zap's iterator costs tens of nanoseconds a posting (a roaring iterator,
// the frequency and norm read as varints, a Posting through an interface), and the common words of a large
// user's queries come back search after search with tens of thousands of postings each; decoded once, a list
// is an array read in order. As for userPostings, a segment's postings never change and scorch never reuses a
// segment id while the index is open, so (segment id, term) names one list for as long as the Index lives.
// Deletions are the snapshot's: a list holds the segment's deleted documents too, and a dense search drops them
// where it drops other users' documents, at the k best (userDocs.has).
type termLists struct {
	*boundedLRU[termKey, []uint64]        // a nil list: one that does not pack, which zap walks
	min                            uint64 // lists shorter than this are not kept: zap walks them quickly enough
}

type termKey struct {
	seg  uint64
	term string
}

// termListOverhead is what a list costs beside its postings: the LRU's element and map slot, the key and the
// slice header.
const termListOverhead = 192

// A decoded posting is doc<<32 | frequency<<16 | field length. A list holding a frequency or a length past 16
// bits (a text of over 65,535 words) is not decoded: zap's iterator scores it as before.
const postingField = 1<<16 - 1

// newTermLists keeps lists of at least minPostings postings, up to maxBytes in all; none when maxBytes is 0 or
// less. Its figures add to counts (nil: nowhere else).
func newTermLists(maxBytes int64, minPostings int, counts *CacheCounts) *termLists {
	return &termLists{newBoundedLRU(maxBytes, termListOverhead, listBytes, counts), uint64(max(minPostings, 1))}
}

func listBytes(k termKey, l []uint64) uint64 {
	return termListOverhead + uint64(len(k.term)) + 8*uint64(cap(l))
}

// of returns term's postings in segment ss, deleted documents included, decoded, or nil when they are not
// worth keeping (live is their count without the deleted ones: too few, or more than a quarter of the bound,
// which decoding for one search would only make dearer) or do not pack: the caller then walks zap's list. The
// slice may be shared with other searches: read it only.
func (c *termLists) of(ss *scorch.SegmentSnapshot, term string, live uint64) ([]uint64, error) {
	if c == nil || c.max == 0 || live < c.min || termListOverhead+uint64(len(term))+8*live > c.max/4 {
		return nil, nil
	}
	key := termKey{ss.Id(), term}
	if l, ok := c.get(key); ok {
		return l, nil
	}
	// Two searches missing at once both decode; the second's list is dropped. A list that does not pack is
	// kept as nil, so that it is not decoded again.
	l, err := decodeTermList(ss, term)
	if err != nil {
		return nil, err
	}
	if listBytes(key, l) > c.max/4 {
		return l, nil // its deleted documents made it longer than its live count: it serves this search only
	}
	c.add(key, l)
	return l, nil
}

// decodeTermList reads term's postings of the text field in ss, deleted documents included; nil if one does
// not pack.
func decodeTermList(ss *scorch.SegmentSnapshot, term string) ([]uint64, error) {
	pl, err := segmentPostings(ss, fieldText, term)
	if err != nil {
		return nil, err
	}
	l := make([]uint64, 0, pl.Count())
	it := pl.Iterator(true, true, false, nil)
	for {
		p, err := it.Next()
		if err != nil || p == nil {
			return l, err
		}
		nb, ok := p.(normBits)
		if !ok {
			return nil, nil
		}
		f, n, d := p.Frequency(), nb.NormUint64(), p.Number()
		if f > postingField || n > postingField || d > 1<<32-1 {
			return nil, nil
		}
		l = append(l, d<<32|f<<16|n)
	}
}
