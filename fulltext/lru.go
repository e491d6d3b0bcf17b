package fulltext

import (
	"sync"

	lru "github.com/hashicorp/golang-lru/v2/simplelru"
)

// boundedLRU holds values charged a size in bytes, the least recently used leaving once the charges pass max;
// safe for concurrent use. The caches of an index (users' postings, decoded lists) are two of them.
type boundedLRU[K comparable, V any] struct {
	mu     sync.Mutex
	lru    *lru.LRU[K, V]
	size   func(K, V) uint64 // what an entry is charged: at least minSize
	bytes  uint64            // what the entries are charged
	max    uint64            // 0: nothing is kept
	counts *CacheCounts      // hits, misses, evictions and bytes, summed over the indexes of a Meter
	closed bool              // emptied: nothing more is kept
}

// newBoundedLRU keeps entries up to maxBytes (none when 0 or less); every entry is charged at least minSize,
// so the byte bound also bounds the count. Its figures add to counts (nil: counts of its own).
func newBoundedLRU[K comparable, V any](maxBytes int64, minSize uint64, size func(K, V) uint64, counts *CacheCounts) *boundedLRU[K, V] {
	if counts == nil {
		counts = &CacheCounts{}
	}
	c := &boundedLRU[K, V]{max: uint64(max(maxBytes, 0)), size: size, counts: counts}
	c.lru, _ = lru.NewLRU(int(max(c.max/minSize, 1)), func(k K, v V) {
		n := c.size(k, v)
		c.bytes -= n
		c.counts.bytes.Add(-int64(n))
		if !c.closed {
			c.counts.evictions.Add(1)
		}
	})
	return c
}

// get returns k's value, if it is kept.
func (c *boundedLRU[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	v, ok := c.lru.Get(k)
	c.mu.Unlock()
	if ok {
		c.counts.hits.Add(1)
	} else {
		c.counts.misses.Add(1)
	}
	return v, ok
}

// add keeps v for k unless k is kept already (two searches that missed at once) or the cache is closed, then
// drops the least recently used entries until the charges are within the bound.
func (c *boundedLRU[K, V]) add(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.lru.Contains(k) {
		return
	}
	c.lru.Add(k, v)
	n := c.size(k, v)
	c.bytes += n
	c.counts.bytes.Add(int64(n))
	for c.bytes > c.max {
		c.lru.RemoveOldest()
	}
}

// close empties the cache for good (its index closed), taking its bytes off the shared counts.
func (c *boundedLRU[K, V]) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.lru.Purge()
}
