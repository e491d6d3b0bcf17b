package vector

import (
	"container/heap"
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

// topK keeps the k best hits seen so far in a min-heap whose root is the worst kept.
type topK struct {
	k    int
	hits []Hit
}

func newTopK(k int) *topK { return &topK{k: k, hits: make([]Hit, 0, k)} }

func (t *topK) Len() int           { return len(t.hits) }
func (t *topK) Less(i, j int) bool { return better(t.hits[j], t.hits[i]) }
func (t *topK) Swap(i, j int)      { t.hits[i], t.hits[j] = t.hits[j], t.hits[i] }
func (t *topK) Push(x any)         { t.hits = append(t.hits, x.(Hit)) }
func (t *topK) Pop() any {
	h := t.hits[len(t.hits)-1]
	t.hits = t.hits[:len(t.hits)-1]
	return h
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
		heap.Push(t, h)
	case better(h, t.hits[0]):
		t.hits[0] = h
		heap.Fix(t, 0)
	}
}

// sorted returns the kept hits best first.
func (t *topK) sorted() []Hit {
	out := t.hits
	sort.Slice(out, func(i, j int) bool { return better(out[i], out[j]) })
	return out
}
