package embed

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"sync/atomic"

	lru "github.com/hashicorp/golang-lru/v2"
)

// DefaultCacheSize is the number of vectors a cache keeps when no size is given.
const DefaultCacheSize = 10000

// Cached is an LRU cache in front of an Embedder. Keys are
// sha256(fingerprint, text), so texts are not retained and a cache can never
// serve vectors of another model. Safe for concurrent use; two concurrent
// misses on the same text both reach the inner embedder.
type Cached struct {
	inner  Embedder
	lru    *lru.Cache[[32]byte, []float32]
	hits   atomic.Uint64
	misses atomic.Uint64
}

// CacheStats counts texts. A text repeated within one call is sent once: one
// miss, the repeats count as hits.
type CacheStats struct {
	Hits   uint64 // texts answered without the inner embedder
	Misses uint64 // texts sent to the inner embedder
	Len    int    // vectors held
}

// NewCached wraps inner with an LRU of size vectors; size <= 0 means DefaultCacheSize.
func NewCached(inner Embedder, size int) *Cached {
	if size <= 0 {
		size = DefaultCacheSize
	}
	c, _ := lru.New[[32]byte, []float32](size) // errors only for size <= 0
	return &Cached{inner: inner, lru: c}
}

// Dim passes through to the inner embedder.
func (c *Cached) Dim() int { return c.inner.Dim() }

// Fingerprint passes through: caching does not change vectors.
func (c *Cached) Fingerprint() string { return c.inner.Fingerprint() }

// Stats returns the counters since NewCached.
func (c *Cached) Stats() CacheStats {
	return CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Len: c.lru.Len()}
}

// Embed serves hits from the cache and sends the distinct misses to the inner
// embedder in one call. Returned vectors are copies the caller may modify.
func (c *Cached) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	fp := c.inner.Fingerprint()
	missAt := map[[32]byte][]int{} // key -> positions in texts
	var missKeys [][32]byte
	var missTexts []string
	for i, t := range texts {
		k := cacheKey(fp, t)
		if v, ok := c.lru.Get(k); ok {
			out[i] = slices.Clone(v)
			continue
		}
		if _, seen := missAt[k]; !seen {
			missKeys, missTexts = append(missKeys, k), append(missTexts, t)
		}
		missAt[k] = append(missAt[k], i)
	}
	c.hits.Add(uint64(len(texts) - len(missTexts)))
	c.misses.Add(uint64(len(missTexts)))
	if len(missTexts) == 0 {
		return out, nil
	}
	vecs, err := c.inner.Embed(ctx, missTexts)
	if err != nil {
		return nil, fmt.Errorf("cached embed: %w", err)
	}
	if len(vecs) != len(missTexts) {
		return nil, fmt.Errorf("cached embed: %w: %d vectors for %d texts", ErrBadResponse, len(vecs), len(missTexts))
	}
	for j, k := range missKeys {
		c.lru.Add(k, slices.Clone(vecs[j]))
		for _, i := range missAt[k] {
			out[i] = slices.Clone(vecs[j])
		}
	}
	return out, nil
}

// cacheKey hashes fingerprint and text with a separator, so that no pair of
// (fingerprint, text) can collide by shifting bytes between the two.
func cacheKey(fp, text string) [32]byte {
	h := sha256.New()
	h.Write([]byte(fp))
	h.Write([]byte{0})
	h.Write([]byte(text))
	var k [32]byte
	h.Sum(k[:0])
	return k
}
