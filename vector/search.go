package vector

import "sync"

// blockRows is how many rows one kernel call scores; the scores fit in 1 KiB
// of stack, and the per-call overhead is amortised over many rows.
const blockRows = 256

// Search returns up to k hits of namespace ns best first by dot product with
// q, ties broken by id; scores are float32 dot products with the stored rows (half precision, scaled back). filter, if
// non-nil, excludes ids for which it returns false; it is called only for
// rows that would enter the top k (or, on the quantized path, pass the running
// floor of the max(k*Rerank, RerankMin) candidates), never concurrently, and
// while ns is read-locked, so it must not write to ns. A query whose length is not
// Dim() matches nothing.
//
// Unless Options.Exact is set (or Dim() < 64), a namespace with more rows
// than the candidate count is searched approximately-then-exactly: an int8
// scan picks the candidates and they are re-scored from their half rows. A true top-k
// row is missed only if its int8 score falls below that of all candidates;
// see DESIGN.md for measured recall.
func (ix *Index) Search(ns string, q []float32, k int, filter func(id string) bool) []Hit {
	return ix.search(ns, q, k, filter, ix.quant)
}

// search is Search with the quantized scan chosen by the caller (tests
// compare both paths on one index).
func (ix *Index) search(ns string, q []float32, k int, filter func(id string) bool, quant bool) []Hit {
	if k <= 0 || len(q) != ix.dim {
		return nil
	}
	n := ix.lookup(ns)
	if n == nil {
		return nil
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	rows := len(n.ids)
	k = min(k, rows)
	if k == 0 {
		return nil
	}
	if c := ix.opts.candidates(k); quant && n.quant && c < rows {
		return ix.searchQuant(n, q, k, c, filter)
	}
	dim := ix.dim
	return ix.scanAll(rows, k, filter, func(t *topK, lo, hi int, f func(string) bool) {
		scan(t, q, n.half[lo*dim:hi*dim], n.scale[lo:hi], n.ids[lo:hi], f)
	})
}

// searchQuant scans the int8 slab for the c best candidates by approximate
// score, then re-scores them from their half rows and keeps the top k.
func (ix *Index) searchQuant(n *namespace, q []float32, k, c int, filter func(string) bool) []Hit {
	dim := ix.dim
	qq := newI8Query(q)
	parts := scanParts(ix, len(n.ids), filter, func() *rowTopK { return newRowTopK(c, n.ids) },
		func(t *rowTopK, lo, hi int, f func(string) bool) { scanQ8(t, qq, n.q8, n.scale, lo, hi, f) })
	cands := parts[0]
	for _, p := range parts[1:] {
		for _, h := range p.best() {
			cands.offer(h)
		}
	}
	// Candidates are few (c, ~80): one dot each with its half row, from their rows. Same kernel and scaling as
	// the flat scan, so scores are bit-identical to it.
	t := newTopK(k)
	for _, h := range cands.best() {
		r := int(h.row)
		t.offer(Hit{ID: n.ids[r], Score: dotF16(q, n.half[r*dim:(r+1)*dim]) * n.scale[r]})
	}
	return t.sorted()
}

// scanAll runs part over all rows into a top-k heap, one heap per part of
// scanParts, merged at the end.
func (ix *Index) scanAll(rows, k int, filter func(string) bool, part func(t *topK, lo, hi int, filter func(string) bool)) []Hit {
	parts := scanParts(ix, rows, filter, func() *topK { return newTopK(k) }, part)
	t := parts[0]
	for _, p := range parts[1:] {
		for _, h := range p.hits {
			t.offer(h)
		}
	}
	return t.sorted()
}

// scanParts runs part over contiguous parts of rows, each into its own top-k
// from newPart, on this goroutine or on Options.workers goroutines, and
// returns them. With several goroutines the filter is wrapped in a mutex
// so callers never need a concurrency-safe filter.
func scanParts[T any](ix *Index, rows int, filter func(string) bool, newPart func() T,
	part func(t T, lo, hi int, filter func(string) bool)) []T {
	w := 1
	if rows >= ix.opts.ParallelMin { // only a search that could split counts: a small user's is short
		m := ix.opts.Meter
		defer m.scanning.Add(-1)
		w = ix.opts.workers(rows, m.scanning.Add(1))
	}
	parts := make([]T, w)
	for i := range parts {
		parts[i] = newPart()
	}
	if w == 1 {
		part(parts[0], 0, rows, filter)
		return parts
	}
	if filter != nil {
		var mu sync.Mutex
		f := filter
		filter = func(id string) bool { mu.Lock(); defer mu.Unlock(); return f(id) }
	}
	var wg sync.WaitGroup
	for i := range w {
		wg.Go(func() { part(parts[i], rows*i/w, rows*(i+1)/w, filter) })
	}
	wg.Wait()
	return parts
}

// scan offers every half row of slab (ids[i] owns row i, scaled by scales[i]) to t. Most rows score below the
// heap's floor, so that test comes first and touches no id.
func scan(t *topK, q []float32, slab []uint16, scales []float32, ids []string, filter func(string) bool) {
	dim := len(q)
	var scores [blockRows]float32
	for base := 0; base < len(ids); base += blockRows {
		m := min(blockRows, len(ids)-base)
		dotBatchF16(q, slab[base*dim:(base+m)*dim], scores[:m])
		for i, s := range scales[base : base+m] {
			scores[i] *= s
		}
		offerBlock(t, scores[:m], ids[base:base+m], filter)
	}
}

// scanQ8 is scan over rows lo to hi of the int8 slab: the approximate score
// of row i is its int32 dot product with the quantized query times the row's
// scale (the int8 row is 127 × its half row, a constant factor ranking ignores).
func scanQ8(t *rowTopK, q *i8Query, q8 []int8, scales []float32, lo, hi int, filter func(string) bool) {
	dim := len(q.wide)
	var dots [blockRows]int32
	var scores [blockRows]float32
	for base := lo; base < hi; base += blockRows {
		m := min(blockRows, hi-base)
		dotBatchI8(q, q8[base*dim:(base+m)*dim], dots[:m])
		sc := scales[base : base+m]
		for i, d := range dots[:m] {
			scores[i] = float32(d) * sc[i]
		}
		offerRows(t, scores[:m], base, filter)
	}
}

// offerBlock offers one block of scored rows to t, testing the heap floor
// before touching an id or calling the filter.
func offerBlock(t *topK, scores []float32, ids []string, filter func(string) bool) {
	floor := t.floor()
	for i, s := range scores {
		if s < floor {
			continue
		}
		id := ids[i]
		if t.beats(s, id) && (filter == nil || filter(id)) {
			t.offer(Hit{ID: id, Score: s})
			floor = t.floor()
		}
	}
}
