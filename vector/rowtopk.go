package vector

// rowHit is a candidate of the quantized scan: a row of the namespace and its approximate score. An int32 row
// bounds a namespace to 2³¹ rows, 512 GiB of float32 at the 64 dimensions quantization starts at.
type rowHit struct {
	score float32
	row   int32
}

// rowTopK is topK over rows rather than ids. A 100k-row scan keeping the 800 candidates of k = 100 offers some
// thousands of rows; carrying ids, each offer read its row's id (a cache miss, the scan's costliest line) and
// moved 24-byte entries. The id is read only to break a tie of scores, and for the filter.
type rowTopK struct {
	k    int
	hits []rowHit
	ids  []string // the namespace's ids, by row
}

func newRowTopK(k int, ids []string) *rowTopK {
	return &rowTopK{k: k, hits: make([]rowHit, 0, k), ids: ids}
}

// better orders candidates as better orders hits: higher score, then smaller id.
func (t *rowTopK) better(a, b rowHit) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return t.ids[a.row] < t.ids[b.row]
}

func (t *rowTopK) full() bool { return len(t.hits) == t.k }

// offer keeps h if it beats the current worst.
func (t *rowTopK) offer(h rowHit) {
	switch {
	case !t.full():
		t.hits = append(t.hits, h)
		t.up(len(t.hits) - 1)
	case t.better(h, t.hits[0]):
		t.hits[0] = h
		t.down(0)
	}
}

func (t *rowTopK) up(j int) {
	h := t.hits
	for j > 0 {
		p := (j - 1) / 2
		if !t.better(h[p], h[j]) {
			break
		}
		h[p], h[j] = h[j], h[p]
		j = p
	}
}

func (t *rowTopK) down(i int) {
	h := t.hits
	for {
		w := i
		if l := 2*i + 1; l < len(h) && t.better(h[w], h[l]) {
			w = l
		}
		if r := 2*i + 2; r < len(h) && t.better(h[w], h[r]) {
			w = r
		}
		if w == i {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

// offerRows offers the scored rows base, base+1, … to t, testing the heap floor before touching an id or
// calling the filter.
func offerRows(t *rowTopK, scores []float32, base int, filter func(string) bool) {
	for i, s := range scores {
		if t.full() {
			if floor := t.hits[0]; s < floor.score || s == floor.score && t.ids[base+i] > t.ids[floor.row] {
				continue
			}
		}
		if filter == nil || filter(t.ids[base+i]) {
			t.offer(rowHit{score: s, row: int32(base + i)})
		}
	}
}
