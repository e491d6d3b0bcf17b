package fulltext

import (
	"context"
	"encoding/binary"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// Dense scoring (DESIGN.md, "Dense queries"). A query whose terms are common walks long posting lists, and
// bleve's document-at-a-time searchers spend most of that walk outside the postings: a DocumentMatch per term
// and document, a disjunction that merges them, a collector heap fed every match. When the posting lists are
// long and dense, denseQuery instead adds each term's postings into one score array per segment (term at a
// time), picks the k best from the arrays, and hands bleve's collector only those. Scores are bleve's to the
// last operation: the same BM25 term scores, query weights, summation order and coordination factor, so a hit
// has the score the OR query gives it, and ties keep bleve's order (the lower document number first). A split
// query (common terms with rare ones, shape.go) is scored the same way, its candidates the documents of its rare
// terms; long lists are read decoded (termcache.go).

// denseQuery is the OR of terms for one user, scored as shapedText's plain form scores it (or, with rare terms,
// its split form), k best.
type denseQuery struct {
	mine  *userDocs // the user's documents in the snapshot's segments
	terms []string
	// rare, when the query is split (shape.go), are its rare terms: only a document holding one is a
	// candidate, as in the split form's conjunction; its score is still that of every term.
	rare    []string
	stats   *search.BM25Stats
	k       int
	bufs    *denseBuffers
	decoded *termLists // long lists decoded, kept between searches; nil: zap's iterator every time
}

// denseBuffers pools the per-segment score arrays and the terms' score memos between searches.
type denseBuffers struct {
	p     sync.Pool
	memos sync.Pool
	used  atomic.Uint64 // searches scored densely
}

func (b *denseBuffers) memo() *termMemo {
	if m, _ := b.memos.Get().(*termMemo); m != nil {
		return m
	}
	return new(termMemo)
}

func (b *denseBuffers) putMemo(m *termMemo) {
	clear(m[:])
	b.memos.Put(m)
}

type denseArrays struct {
	score []float64
	count []uint8 // matched terms per document: at most DisjunctionHeapTakeover
}

func (b *denseBuffers) get(n int) *denseArrays {
	a, _ := b.p.Get().(*denseArrays)
	if a == nil {
		a = &denseArrays{}
	}
	if cap(a.score) < n {
		a.score, a.count = make([]float64, n), make([]uint8, n)
	}
	a.score, a.count = a.score[:n], a.count[:n]
	return a
}

func (b *denseBuffers) put(a *denseArrays, lo, hi int) {
	clear(a.score[lo:hi])
	clear(a.count[lo:hi])
	b.p.Put(a)
}

// denseTerm is one term's posting lists, one per segment, and its bleve scoring constants.
type denseTerm struct {
	term   string
	rare   bool // one of a split query's rare terms
	lists  []segment.PostingsList
	live   []uint64 // lists[i].Count(): its postings less the snapshot's deleted documents
	df     uint64
	idf    float64
	weight float64 // bleve's queryWeight: boost (1) × idf × queryNorm
	memo   *termMemo
}

// A term's score in a document depends only on the posting's frequency and the document's length, which are
// small integers in memories (a few words, a few hundred in a long turn), while a dense query scores each term
// in tens of thousands of documents: a square root, a division and bleve's norm (a square root and a division
// more) a posting. termMemo keeps the score of each (frequency, length) pair below memoFreqs × memoLens, as
// computed the first time, so every posting of the pair gets the same bits as before.
const memoFreqs, memoLens = 4, 512

type termMemo [memoFreqs * memoLens]float64 // 0: not computed yet (a term score is never 0: idf > 0)

// normBits is zap's posting: its norm as stored, the field length's bits, without the conversion Norm makes.
type normBits interface{ NormUint64() uint64 }

// score is the term's weighted BM25 score of p's document, bleve's to the bit.
func (t *denseTerm) score(p segment.Posting, avg float64) float64 {
	if nb, ok := p.(normBits); ok {
		return t.scoreOf(p.Frequency(), nb.NormUint64(), avg)
	}
	return float64(t.weight * bm25(t.idf, p.Frequency(), p.Norm(), avg))
}

// scoreOf is the term's weighted BM25 score of a document where it occurs f times in a text of length l (zap's
// stored norm), bleve's to the bit. The explicit conversion rounds the product before it is memoized or added,
// so no platform fuses it with the caller's addition.
func (t *denseTerm) scoreOf(f, l uint64, avg float64) float64 {
	if t.memo != nil && f < memoFreqs && l < memoLens {
		i := f*memoLens + l
		if v := t.memo[i]; v != 0 {
			return v
		}
		v := float64(t.weight * bm25(t.idf, f, zapNorm(l), avg))
		t.memo[i] = v
		return v
	}
	return float64(t.weight * bm25(t.idf, f, zapNorm(l), avg))
}

// zapNorm is zap's Posting.Norm of a stored length l.
func zapNorm(l uint64) float64 { return float64(float32(1.0 / math.Sqrt(float64(l)))) }

// denseHit is a candidate for the k best.
type denseHit struct {
	score float64
	doc   uint64 // the snapshot's document number
	seg   int
	local uint64
}

// worse orders hits as bleve's collector does: lower score, then the later document.
func (h denseHit) worse(o denseHit) bool {
	if h.score != o.score {
		return h.score < o.score
	}
	return h.doc > o.doc
}

// searcher returns a searcher of the k best documents, or nil when the query is not worth scoring densely
// (short posting lists, or no user's documents: an index reader that is not a scorch snapshot): the caller
// then builds bleve's. n is the user's document count and total the index's.
func (q *denseQuery) searcher(ctx context.Context, minPostings int, n, total uint64) (search.Searcher, error) {
	// Over DisjunctionHeapTakeover terms bleve's disjunction is a heap that sums a document's term scores in
	// the order they pop, which dense cannot reproduce to the last bit.
	if q.mine == nil || minPostings < 0 || len(q.terms) > searcher.DisjunctionHeapTakeover {
		return nil, nil
	}
	// A term's df is at most the user's n: decline before looking the terms up, since bleve looks them up again.
	if most := uint64(len(q.terms)) * n; !q.dense(most, total, minPostings) {
		return nil, nil
	}
	segs := q.mine.segs
	terms, docs, err := q.lists(segs)
	if err != nil {
		return nil, err
	}
	var postings uint64
	for _, t := range terms {
		postings += t.df
	}
	if !q.dense(postings, docs, minPostings) {
		return nil, nil
	}
	q.weigh(terms)
	if !rareFirst(terms) {
		return nil, nil
	}
	hits, err := q.best(ctx, segs, terms)
	if err != nil {
		return nil, err
	}
	q.bufs.used.Add(1)
	return newListSearcher(segs, hits)
}

// dense: postings this many, in an index of docs documents, are worth an array per segment; below, a
// DocumentMatch per posting costs less.
func (q *denseQuery) dense(postings, docs uint64, minPostings int) bool {
	return postings >= uint64(minPostings) && postings*8 >= docs
}

// lists looks up each term's posting list in every segment (deleted documents excepted, as bleve's term
// readers do); docs is the snapshot's document count, deleted ones included.
func (q *denseQuery) lists(segs []*scorch.SegmentSnapshot) (terms []*denseTerm, docs uint64, err error) {
	terms = make([]*denseTerm, len(q.terms))
	for i, t := range q.terms {
		terms[i] = &denseTerm{term: t, rare: slices.Contains(q.rare, t), lists: make([]segment.PostingsList, len(segs)),
			live: make([]uint64, len(segs))}
	}
	for s, ss := range segs {
		docs += ss.Segment().Count()
		dict, err := ss.Segment().Dictionary(fieldText)
		if err != nil {
			return nil, 0, err
		}
		for i, t := range q.terms {
			pl, err := dict.PostingsList([]byte(t), ss.Deleted(), nil)
			if err != nil {
				return nil, 0, err
			}
			terms[i].lists[s], terms[i].live[s] = pl, pl.Count()
			terms[i].df += terms[i].live[s]
		}
	}
	return terms, docs, nil
}

// weigh computes each term's idf and query weight as bleve's BM25 term scorer and disjunction do, and orders
// the terms as bleve's disjunction orders its searchers (by posting count), which is the order it sums them.
func (q *denseQuery) weigh(terms []*denseTerm) {
	n := q.stats.DocCount
	slices.SortStableFunc(terms, func(a, b *denseTerm) int { return cmpU64(a.df, b.df) })
	var sumSq float64
	for _, t := range terms {
		t.idf = math.Log(1 + (n-float64(t.df)+0.5)/(float64(t.df)+0.5))
		sumSq += t.idf * t.idf
	}
	norm := 1.0 / math.Sqrt(sumSq)
	for _, t := range terms {
		t.weight = t.idf * norm
	}
}

// rareFirst reports whether, in the order the terms are summed (weigh), a split query's rare terms all come
// before its common ones, as their document frequencies order them (shape.go): scoreSegment then knows the
// candidates once the rare terms are in. Always so; checked, since the scores depend on it.
func rareFirst(terms []*denseTerm) bool {
	common := false
	for _, t := range terms {
		if t.rare && common {
			return false
		}
		common = common || !t.rare
	}
	return true
}

// best scores every segment and keeps the k best hits of the user's documents, in document order.
func (q *denseQuery) best(ctx context.Context, segs []*scorch.SegmentSnapshot, terms []*denseTerm) ([]denseHit, error) {
	avg := math.Ceil(float64(q.stats.FieldCardinality[fieldText]) / q.stats.DocCount)
	for _, t := range terms {
		t.memo = q.bufs.memo()
	}
	defer func() {
		for _, t := range terms {
			q.bufs.putMemo(t.memo)
			t.memo = nil
		}
	}()
	top := make([]denseHit, 0, q.k+1)
	var base uint64
	for s, ss := range segs {
		var err error
		if top, err = q.scoreSegment(ctx, ss, s, base, terms, avg, top); err != nil {
			return nil, err
		}
		base += ss.Segment().Count() // as scorch numbers documents: deleted ones keep their numbers
	}
	slices.SortFunc(top, func(a, b denseHit) int { return cmpU64(a.doc, b.doc) })
	return top, nil
}

// scoreSegment adds the terms' BM25 scores for segment s into score arrays, term after term, and offers each
// scored document of the user to top.
func (q *denseQuery) scoreSegment(ctx context.Context, ss *scorch.SegmentSnapshot, s int, base uint64, terms []*denseTerm, avg float64,
	top []denseHit) ([]denseHit, error) {
	a := q.bufs.get(int(ss.Segment().Count()))
	lo, hi := len(a.score), 0
	defer func() { q.bufs.put(a, lo, max(lo, hi)) }()
	split := len(q.rare) > 0
	for _, t := range terms {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// A common term of a split query adds only to the candidates: the documents a rare term (all of
		// which come first) has already scored.
		gate := split && !t.rare
		decoded, err := q.decoded.of(ss, t.term, t.live[s])
		if err != nil {
			return nil, err
		}
		if decoded != nil {
			for _, p := range decoded {
				d := int(p >> 32)
				if gate && a.count[d] == 0 {
					continue
				}
				a.score[d] += t.scoreOf(p>>16&postingField, p&postingField, avg)
				a.count[d]++
				lo, hi = min(lo, d), max(hi, d+1)
			}
			continue
		}
		it := t.lists[s].Iterator(true, true, false, nil)
		for {
			p, err := it.Next()
			if err != nil {
				return nil, err
			} else if p == nil {
				break
			}
			d := int(p.Number())
			if gate && a.count[d] == 0 {
				continue
			}
			a.score[d] += t.score(p, avg)
			a.count[d]++
			lo, hi = min(lo, d), max(hi, d+1)
		}
	}
	if lo >= hi {
		return top, nil
	}
	total := float64(len(terms))
	for d := lo; d < hi; d++ {
		if a.count[d] == 0 {
			continue
		}
		h := denseHit{score: a.score[d] * (float64(a.count[d]) / total), doc: base + uint64(d), seg: s, local: uint64(d)}
		if len(top) == q.k && !top[0].worse(h) {
			continue
		}
		// Terms are scoped to the user (scope.go), so every scored document is the user's unless two users'
		// scopes collide: the user's own posting list decides, as the user filter does in bleve's query.
		if !q.mine.has(s, uint32(d)) {
			continue
		}
		top = pushHit(top, h, q.k)
	}
	return top, nil
}

// bm25 is bleve's BM25 term score (scorer.TermQueryScorer.docScore), in its order of operations.
func bm25(idf float64, freq uint64, norm float64, avg float64) float64 {
	tf := math.Sqrt(float64(freq))
	fieldLength := 1 / (norm * norm)
	return idf * (tf * search.BM25_k1) /
		(tf + search.BM25_k1*(1-search.BM25_b+(search.BM25_b*fieldLength/avg)))
}

// pushHit adds h to the min-heap top (worst first), keeping at most k.
func pushHit(top []denseHit, h denseHit, k int) []denseHit {
	if len(top) == k {
		top[0] = h
		siftDown(top, 0)
		return top
	}
	top = append(top, h)
	for i := len(top) - 1; i > 0; {
		parent := (i - 1) / 2
		if !top[i].worse(top[parent]) {
			break
		}
		top[i], top[parent] = top[parent], top[i]
		i = parent
	}
	return top
}

func siftDown(top []denseHit, i int) {
	for {
		l, w := 2*i+1, i
		if l < len(top) && top[l].worse(top[w]) {
			w = l
		}
		if r := l + 1; r < len(top) && top[r].worse(top[w]) {
			w = r
		}
		if w == i {
			return
		}
		top[i], top[w] = top[w], top[i]
		i = w
	}
}

// listSearcher hands bleve's collector a fixed list of scored hits, in document order.
type listSearcher struct {
	hits []denseHit
	ids  []string
	next int
}

func newListSearcher(segs []*scorch.SegmentSnapshot, hits []denseHit) (*listSearcher, error) {
	ids := make([]string, len(hits))
	for i, h := range hits {
		id, err := segs[h.seg].DocID(h.local)
		if err != nil {
			return nil, err
		}
		ids[i] = string(id)
	}
	return &listSearcher{hits: hits, ids: ids}, nil
}

func (l *listSearcher) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	if l.next >= len(l.hits) {
		return nil, nil
	}
	h := l.hits[l.next]
	dm := ctx.DocumentMatchPool.Get()
	dm.IndexInternalID = binary.BigEndian.AppendUint64(dm.IndexInternalID[:0], h.doc)
	dm.ID, dm.Score = l.ids[l.next], h.score
	l.next++
	return dm, nil
}

// Advance is not used: the list searcher is always the whole query, never a clause of a conjunction.
func (l *listSearcher) Advance(ctx *search.SearchContext, id index.IndexInternalID) (*search.DocumentMatch, error) {
	for {
		dm, err := l.Next(ctx)
		if dm == nil || err != nil || binary.BigEndian.Uint64(dm.IndexInternalID) >= binary.BigEndian.Uint64(id) {
			return dm, err
		}
		ctx.DocumentMatchPool.Put(dm)
	}
}

func (l *listSearcher) Close() error               { return nil }
func (l *listSearcher) Weight() float64            { return 1 }
func (l *listSearcher) SetQueryNorm(float64)       {}
func (l *listSearcher) Count() uint64              { return uint64(len(l.hits)) }
func (l *listSearcher) Min() int                   { return 0 }
func (l *listSearcher) Size() int                  { return 64 + 40*len(l.hits) }
func (l *listSearcher) DocumentMatchPoolSize() int { return len(l.hits) + 1 }
