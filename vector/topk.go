package vector

import (
	"math"
	"sort"
)

// Hit is one search result.
type Hit struct {
	ID    string
	Score float32
}

// better orders hits best first: higher score, then smaller id so that
// equal scores come back in the same order on every run and replica.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.ID < b.ID
}

// topK keeps the k best hits seen so far in a min-heap whose root is the worst kept. The heap is sifted by
// hand rather than through container/heap: its interface calls were a fifth of a 100k-row search's CPU
// (a search keeps a few hundred candidates for the exact re-rank, and replaces some thousands of them).
type topK struct {
	k    int
	hits []Hit
}

func newTopK(k int) *topK { return &topK{k: k, hits: make([]Hit, 0, k)} }

// up moves hits[j] towards the root while it is worse than its parent.
func (t *topK) up(j int) {
	h := t.hits
	for j > 0 {
		p := (j - 1) / 2
		if !better(h[p], h[j]) {
			break
		}
		h[p], h[j] = h[j], h[p]
		j = p
	}
}

// down moves hits[i] towards the leaves while a child is worse than it.
func (t *topK) down(i int) {
	h := t.hits
	for {
		w := i
		if l := 2*i + 1; l < len(h) && better(h[w], h[l]) {
			w = l
		}
		if r := 2*i + 2; r < len(h) && better(h[w], h[r]) {
			w = r
		}
		if w == i {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

// full reports whether the heap holds k hits.
func (t *topK) full() bool { return len(t.hits) == t.k }

// floor is the score below which nothing can enter: the worst kept score
// once full, minus infinity before.
func (t *topK) floor() float32 {
	if !t.full() {
		return float32(math.Inf(-1))
	}
	return t.hits[0].Score
}

// beats reports whether a hit with score s and id would be kept. Score is
// tested first so the common reject touches no strings.
func (t *topK) beats(s float32, id string) bool {
	if !t.full() {
		return true
	}
	min := t.hits[0]
	return s > min.Score || (s == min.Score && id < min.ID)
}

// offer keeps h if it beats the current worst.
func (t *topK) offer(h Hit) {
	switch {
	case !t.full():
		t.hits = append(t.hits, h)
		t.up(len(t.hits) - 1)
	case better(h, t.hits[0]):
		t.hits[0] = h
		t.down(0)
	}
}

// sorted returns the kept hits best first.
func (t *topK) sorted() []Hit {
	out := t.hits
	sort.Slice(out, func(i, j int) bool { return better(out[i], out[j]) })
	return out
}
