package fulltext

import (
	"context"
	"encoding/binary"
	"sort"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"
)

// userFilter keeps a user's own documents among the matches of its scoped terms. Terms are scoped to the user
// (scope.go), so every match is the user's unless two users' scopes collide; the filter is the guard for that
// case. A conjunction with the user term guards the same way, but it leapfrogs the user's posting list beside
// every match (a fifth of a small user's search in a shard of many users); the filter looks a match up in the
// user's documents of its segment, a bitmap read once per segment a match comes from. Documents the filter
// cannot place are dropped: it fails closed.
type userFilter struct {
	user string
	segs []*scorch.SegmentSnapshot
	ends []uint64          // ends[i]: the first document number after segment i, as scorch numbers documents
	mine []*roaring.Bitmap // the user's live documents of segment i, read at its first match
	err  error
}

func newUserFilter(user string, segs []*scorch.SegmentSnapshot) *userFilter {
	f := &userFilter{user: user, segs: segs, ends: make([]uint64, len(segs)), mine: make([]*roaring.Bitmap, len(segs))}
	var end uint64
	for i, ss := range segs {
		end += ss.Segment().Count() // deleted documents keep their numbers
		f.ends[i] = end
	}
	return f
}

// start is segment s's first document number.
func (f *userFilter) start(s int) uint64 {
	if s == 0 {
		return 0
	}
	return f.ends[s-1]
}

// keep is a searcher.FilterFunc.
func (f *userFilter) keep(_ *search.SearchContext, d *search.DocumentMatch) bool {
	if len(d.IndexInternalID) != 8 {
		return false
	}
	doc := binary.BigEndian.Uint64(d.IndexInternalID)
	s := sort.Search(len(f.ends), func(i int) bool { return f.ends[i] > doc })
	if s == len(f.ends) {
		return false
	}
	if f.mine[s] == nil {
		bm, err := userDocs(f.segs[s], f.user)
		if err != nil {
			f.err = err
			return false
		}
		f.mine[s] = bm
	}
	return f.mine[s].Contains(uint32(doc - f.start(s)))
}

// filtered is a searcher of the matches f keeps, which fails with the error f met reading a segment.
type filtered struct {
	*searcher.FilteringSearcher
	f *userFilter
}

func newFiltered(ctx context.Context, s search.Searcher, f *userFilter) filtered {
	return filtered{searcher.NewFilteringSearcher(ctx, s, f.keep), f}
}

func (s filtered) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	return s.checked(s.FilteringSearcher.Next(ctx))
}

func (s filtered) Advance(ctx *search.SearchContext, id index.IndexInternalID) (*search.DocumentMatch, error) {
	return s.checked(s.FilteringSearcher.Advance(ctx, id))
}

// checked turns a match into the filter's error, if reading a segment failed.
func (s filtered) checked(dm *search.DocumentMatch, err error) (*search.DocumentMatch, error) {
	if err == nil && s.f.err != nil {
		return nil, s.f.err
	}
	return dm, err
}
