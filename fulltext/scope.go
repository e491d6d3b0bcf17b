package fulltext

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"math"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"
)

// Text terms are scoped to their user (DESIGN.md, "Terms scoped to the user"): every term of a user's text is
// indexed as the user's scope followed by the analysed word, so each term's postings hold that user's
// documents only. A search then reads postings, and document frequencies, of its own user alone: its cost and
// its scores do not depend on the other users of the shard.

// scopeLen is the length of a scope: the user id's 64-bit FNV-1a hash, big-endian. Terms are bytes to bleve and
// vellum; nothing parses them.
const scopeLen = 8

// userScope is the prefix of user's text terms. Two users of one shard whose hashes collide would share
// postings; the user term every search is conjoined with still keeps each user's hits its own.
func userScope(user string) []byte {
	h := fnv.New64a()
	h.Write([]byte(user))
	return binary.BigEndian.AppendUint64(make([]byte, 0, scopeLen), h.Sum64())
}

// scopeAnalyzer analyses a document's text, and then each of also (its entities: an entity counts once more in
// its words' term frequency), with words, and prefixes every word with scope.
type scopeAnalyzer struct {
	words analysis.Analyzer
	scope []byte
	also  []string
}

func (a *scopeAnalyzer) Analyze(text []byte) analysis.TokenStream {
	out := a.scoped(a.words.Analyze(text), 0)
	for _, e := range a.also {
		out = append(out, a.scoped(a.words.Analyze([]byte(e)), len(out))...)
	}
	return out
}

// scoped rewrites toks' terms in place (their positions follow n earlier tokens) and returns toks.
func (a *scopeAnalyzer) scoped(toks analysis.TokenStream, n int) analysis.TokenStream {
	for i, t := range toks {
		term := make([]byte, 0, len(a.scope)+len(t.Term))
		t.Term = append(append(term, a.scope...), t.Term...)
		t.Position = n + i + 1
	}
	return toks
}

// userStats are the BM25 statistics of one user's documents: their count, and the shard's average text
// length scaled to it (a per-user length sum is not kept). With the user's own document frequencies, a term's
// idf is then what it would be in an index of that user alone.
// n is the user's document count and total the shard's. The count comes from docs, the user's documents of
// each segment, when the caller has read them; else from a term reader of the user.
func userStats(ctx context.Context, r index.IndexReader, user string, docs *userDocs) (stats *search.BM25Stats, n, total uint64, err error) {
	if n, err = userCount(ctx, r, user, docs); err != nil {
		return nil, 0, 0, err
	}
	if total, err = r.DocCount(); err != nil {
		return nil, 0, 0, err
	}
	card := 0
	if br, ok := r.(index.BM25Reader); ok && total > 0 {
		all, err := br.FieldCardinality(fieldText)
		if err != nil {
			return nil, 0, 0, err
		}
		// bleve's average length is ceil(cardinality / count), as bleve computes it for the shard. Scorch's
		// cardinality is the sum of its segments' dictionary sizes, so it moves when segments merge (DESIGN.md).
		card = int(math.Ceil(float64(all)/float64(total))) * int(n)
	}
	return &search.BM25Stats{DocCount: float64(n), FieldCardinality: map[string]int{fieldText: card}}, n, total, nil
}

func userCount(ctx context.Context, r index.IndexReader, user string, docs *userDocs) (uint64, error) {
	if docs != nil {
		return docs.count(), nil
	}
	tfr, err := r.TermFieldReader(ctx, []byte(user), fieldUserID, false, false, false)
	if err != nil {
		return 0, err
	}
	n := tfr.Count()
	return n, tfr.Close()
}
