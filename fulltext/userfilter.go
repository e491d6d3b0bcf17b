package fulltext

import (
	"encoding/binary"

	"github.com/blevesearch/bleve/v2/search"
)

// userFilter keeps a user's own documents among the matches of its scoped terms. Terms are scoped to the user
// (scope.go), so every match is the user's unless two users' scopes collide; the filter is the guard for that
// case. A conjunction with the user term guards the same way, but it leapfrogs the user's posting list beside
// every match (a fifth of a small user's search in a shard of many users); the filter looks a match up in the
// user's documents of its segment (userdocs.go), bitmaps the search has read already for the user's document
// count. Documents the filter cannot place are dropped: it fails closed.
type userFilter struct{ docs *userDocs }

// keep is a searcher.FilterFunc.
func (f userFilter) keep(_ *search.SearchContext, d *search.DocumentMatch) bool {
	if len(d.IndexInternalID) != 8 {
		return false
	}
	s, local, ok := f.docs.locate(binary.BigEndian.Uint64(d.IndexInternalID))
	return ok && f.docs.has(s, local)
}
