package fulltext

import (
	"fmt"
	"sort"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// userPostings caches a user's postings of the user id field, segment by segment. Every plain search of a user
// needs them twice over, for its BM25 statistics (the user's document count) and for the user filter, and
// reading them is a dictionary look-up and a bitmap decode per segment: a fifth of a small user's search in a
// shard of several segments. A segment's documents never change (deletions are the snapshot's, kept apart),
// and scorch never gives two segments the same id while the index is open (a persisted segment keeps the id of
// the one in memory it replaces, with the same documents), so (segment id, user) names one bitmap for as long
// as the Index lives. Entries of segments merged away are never asked for again and leave as the least
// recently used.
type userPostings struct {
	*boundedLRU[postingsKey, postingsEntry]
}

type postingsKey struct {
	seg  uint64
	user string
}

// postingsEntry is one cached bitmap, nil when the user has no document in the segment (so in most segments of
// a shard of many users), and the bytes it is charged.
type postingsEntry struct {
	bm   *roaring.Bitmap
	size uint64
}

// entryOverhead is what an entry costs beside its bitmap's containers and its user's name: the LRU's list
// element and map slot, the key, and a bitmap's own header (about 260 bytes measured for an empty one).
const entryOverhead = 256

// newUserPostings keeps entries up to maxBytes; none when maxBytes is 0 or less. Its figures add to counts (nil:
// nowhere else).
func newUserPostings(maxBytes int64, counts *CacheCounts) *userPostings {
	return &userPostings{newBoundedLRU(maxBytes, entryOverhead, func(_ postingsKey, e postingsEntry) uint64 { return e.size }, counts)}
}

// of returns the user's documents of segment ss, deleted ones included, or nil if it has none there. The bitmap
// may be shared with other searches: read it only.
func (c *userPostings) of(ss *scorch.SegmentSnapshot, user string) (*roaring.Bitmap, error) {
	key := postingsKey{ss.Id(), user}
	if e, ok := c.get(key); ok {
		return e.bm, nil
	}
	bm, err := readUserPostings(ss, user)
	if err != nil {
		return nil, err
	}
	if bm.IsEmpty() {
		bm = nil
	}
	size := entryOverhead + uint64(len(user))
	if bm != nil {
		size += bm.GetSizeInBytes()
	}
	if size > c.max/4 {
		// Nothing is cached (max 0), or a user this large would push out many small ones, and its searches
		// are long anyway: the bitmap serves this search only, while it holds the snapshot.
		return bm, nil
	}
	if bm != nil {
		// The containers may still be the segment's own bytes (copy on write over its mapped file), which
		// are unmapped once the segment is merged away: a cached bitmap must own its memory.
		bm.CloneCopyOnWriteContainers()
	}
	c.add(key, postingsEntry{bm, size})
	return bm, nil
}

// readUserPostings reads the user's documents of segment ss, deleted ones included. The bitmap's containers
// may be views of the segment's bytes: valid while the caller holds the snapshot. (It reads the field whatever
// the mapping says of it: an Index never changes its mapping, see checkVersion.)
func readUserPostings(ss *scorch.SegmentSnapshot, user string) (*roaring.Bitmap, error) {
	pl, err := segmentPostings(ss, fieldUserID, user)
	if err != nil {
		return nil, err
	}
	bm := roaring.New()
	if or, ok := pl.(interface{ OrInto(*roaring.Bitmap) }); ok {
		or.OrInto(bm)
		return bm, nil
	}
	it := pl.Iterator(false, false, false, nil)
	for p, err := it.Next(); p != nil || err != nil; p, err = it.Next() {
		if err != nil {
			return nil, err
		}
		bm.Add(uint32(p.Number()))
	}
	return bm, nil
}

// segmentPostings is term's posting list of field in segment ss, deleted documents included.
func segmentPostings(ss *scorch.SegmentSnapshot, field, term string) (segment.PostingsList, error) {
	dict, err := ss.Segment().Dictionary(field)
	if err != nil {
		return nil, err
	}
	return dict.PostingsList([]byte(term), nil, nil)
}

// userDocs is a user's live documents in each segment of one index snapshot, and how scorch numbers them.
type userDocs struct {
	segs []*scorch.SegmentSnapshot
	ends []uint64          // ends[i]: the first document number after segment i (deleted documents keep theirs)
	all  []*roaring.Bitmap // the user's documents of segment i, deleted ones included (nil: none); read only
}

func (c *userPostings) docs(is *scorch.IndexSnapshot, user string) (*userDocs, error) {
	segs := is.Segments()
	u := &userDocs{segs: segs, ends: make([]uint64, len(segs)), all: make([]*roaring.Bitmap, len(segs))}
	var end uint64
	for i, ss := range segs {
		bm, err := c.of(ss, user)
		if err != nil {
			return nil, fmt.Errorf("user postings of segment %d: %w", ss.Id(), err)
		}
		u.all[i] = bm
		end += ss.Segment().Count()
		u.ends[i] = end
	}
	return u, nil
}

// count is the number of the user's live documents.
func (u *userDocs) count() uint64 {
	var n uint64
	for i, bm := range u.all {
		if bm == nil {
			continue
		}
		n += bm.GetCardinality()
		if del := u.segs[i].Deleted(); del != nil {
			n -= bm.AndCardinality(del)
		}
	}
	return n
}

// has reports whether local document d of segment s is a live document of the user.
func (u *userDocs) has(s int, d uint32) bool {
	if bm := u.all[s]; bm == nil || !bm.Contains(d) {
		return false
	}
	del := u.segs[s].Deleted()
	return del == nil || !del.Contains(d)
}

// locate is the segment of the snapshot's document doc and its number there; ok is false past the last one.
func (u *userDocs) locate(doc uint64) (s int, local uint32, ok bool) {
	s = sort.Search(len(u.ends), func(i int) bool { return u.ends[i] > doc })
	if s == len(u.ends) {
		return 0, 0, false
	}
	start := uint64(0)
	if s > 0 {
		start = u.ends[s-1]
	}
	return s, uint32(doc - start), true
}
