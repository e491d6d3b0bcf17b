package vector

// rowHit is a candidate of the quantized scan: a row of the namespace and its approximate score. An int32 row
// bounds a namespace to 2³¹ rows, 512 GiB of float32 at the 64 dimensions quantization starts at.
type rowHit struct {
	score float32
	row   int32
}

// rowTopK keeps the k best rows offered, over rows rather than ids: carrying ids, each offer read its row's id (a
// cache miss, the scan's costliest line) and moved 24-byte entries. The id is read only to break a tie of
// scores, and for the filter.
//
// It is a buffer, not a heap. A 100k-row scan keeping the 800 candidates of k = 100 takes in some thousands of
// rows, and a heap of 800 sifted each of them through ten levels: a third of the scan's CPU. Here a row that beats
// the floor is appended; when the buffer holds 2k, a selection keeps the k best and their worst becomes the new
// floor. That costs a few comparisons a row. The floor is looser than a heap's: before the first selection every
// row passes it until 2k have, and after each it trails a heap's by up to k accepted rows, so more rows reach
// the filter than a heap would let in; the rows kept are the same.
type rowTopK struct {
	k     int
	hits  []rowHit // at most 2k, unordered; the k best are kept by keepBest
	floor rowHit   // the worst of the k kept at the last selection; valid once floored
	// floored is set by the first selection: from then on a row must beat floor to enter.
	floored bool
	ids     []string // the namespace's ids, by row
}

// newRowTopK keeps the k best rows of ids; k must be at least 1 (the quantized scan keeps at least RerankMin).
func newRowTopK(k int, ids []string) *rowTopK {
	return &rowTopK{k: k, hits: make([]rowHit, 0, 2*k), ids: ids}
}

// better orders candidates as better orders hits: higher score, then smaller id.
func (t *rowTopK) better(a, b rowHit) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return t.ids[a.row] < t.ids[b.row]
}

// passes reports whether a row scoring s at row could still be among the k best. It reads the row's id only on
// a tie with the floor.
func (t *rowTopK) passes(s float32, row int) bool {
	return !t.floored || s > t.floor.score || s == t.floor.score && t.ids[row] < t.ids[t.floor.row]
}

// offer keeps h if it beats the floor.
func (t *rowTopK) offer(h rowHit) {
	if t.passes(h.score, int(h.row)) {
		t.push(h)
	}
}

// push appends h, which passed the floor, and selects the k best when the buffer is full.
func (t *rowTopK) push(h rowHit) {
	t.hits = append(t.hits, h)
	if len(t.hits) == 2*t.k {
		t.keepBest()
	}
}

// keepBest cuts the buffer to its k best rows (in no order) and makes their worst the floor.
func (t *rowTopK) keepBest() {
	if len(t.hits) <= t.k {
		return
	}
	t.selectBest(t.k - 1)
	t.floor = t.hits[t.k-1]
	t.floored = true
	t.hits = t.hits[:t.k]
}

// best returns the k best rows offered, in no order.
func (t *rowTopK) best() []rowHit {
	t.keepBest()
	return t.hits
}

// selectBest reorders hits so that hits[n] is the row that would be there were hits sorted best first, with
// every better row before it and every worse one after (Hoare's selection, median-of-three pivots). better is a
// strict total order (rows are distinct, ties broken by id), so the rows kept do not depend on the buffer's order.
func (t *rowTopK) selectBest(n int) {
	h := t.hits
	lo, hi := 0, len(h)-1
	for hi > lo {
		if hi-lo < 16 {
			t.insertionSort(lo, hi)
			return
		}
		p := t.partition(lo, hi)
		switch {
		case n < p:
			hi = p - 1
		case n > p:
			lo = p + 1
		default:
			return
		}
	}
}

// partition places a median-of-three pivot of hits[lo..hi] at its final position and returns it: better rows
// before it, worse ones after.
func (t *rowTopK) partition(lo, hi int) int {
	h := t.hits
	mid := lo + (hi-lo)/2
	if t.better(h[mid], h[lo]) {
		h[mid], h[lo] = h[lo], h[mid]
	}
	if t.better(h[hi], h[lo]) {
		h[hi], h[lo] = h[lo], h[hi]
	}
	if t.better(h[hi], h[mid]) {
		h[hi], h[mid] = h[mid], h[hi]
	}
	// Now h[lo] is the best of the three and h[mid] the median, which moves to hi as the pivot.
	h[mid], h[hi] = h[hi], h[mid]
	pivot := h[hi]
	i := lo
	for j := lo; j < hi; j++ {
		if t.better(h[j], pivot) {
			h[i], h[j] = h[j], h[i]
			i++
		}
	}
	h[i], h[hi] = h[hi], h[i]
	return i
}

func (t *rowTopK) insertionSort(lo, hi int) {
	h := t.hits
	for i := lo + 1; i <= hi; i++ {
		for j := i; j > lo && t.better(h[j], h[j-1]); j-- {
			h[j], h[j-1] = h[j-1], h[j]
		}
	}
}

// offerRows offers the scored rows base, base+1, … to t, testing the floor before touching an id or calling the
// filter.
func offerRows(t *rowTopK, scores []float32, base int, filter func(string) bool) {
	for i, s := range scores {
		if r := base + i; t.passes(s, r) && (filter == nil || filter(t.ids[r])) {
			t.push(rowHit{score: s, row: int32(r)})
		}
	}
}
