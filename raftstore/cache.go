package raftstore

import (
	"sync"

	"github.com/hashicorp/raft"
)

// Cache keeps a group's latest log entries in memory, as raft.LogCache does, within a byte budget as well as
// an entry count. The leader's replicators send each new entry to every follower, and a follower applies what
// it just appended: without a cache both read it back from Pebble (a skiplist seek and a decode per entry, ~4 %
// of a node's CPU under 64 writing clients). raft.LogCache keeps its last N entries whatever their size, and an
// entry of a batch put holds up to a hundred memories (~260 KB): 64 of them in each of a node's 48 groups were
// most of a gigabyte, kept even while the groups were idle. Here the oldest entries leave once the budget is
// spent, and an entry larger than the whole budget is not kept.
//
// It is also where a leader's new entries wait while the leader writes them (raft.LogStager): the replicators
// read them from here and send them to the followers during the leader's own disk write.
type Cache struct {
	raft.LogStore
	budget int

	mu     sync.RWMutex
	ring   []*raft.Log
	bytes  int
	staged []*raft.Log // a leader's entries being written, consecutive; read before the ring
}

// CacheEntries and CacheBytes are what a memnode's groups keep of their latest log entries: 64 single puts, or
// about 8 entries of a hundred-memory batch put.
const (
	CacheEntries = 64
	CacheBytes   = 2 << 20
)

// NewCache wraps store with a cache of up to entries entries and budget bytes of entry data.
func NewCache(store raft.LogStore, entries, budget int) *Cache {
	return &Cache{LogStore: store, budget: budget, ring: make([]*raft.Log, entries)}
}

// IsMonotonic implements raft.MonotonicLogStore by asking the store, as raft.LogCache does.
func (c *Cache) IsMonotonic() bool {
	m, ok := c.LogStore.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}

// GetLog implements raft.LogStore: from the staged entries or the cache when they hold idx.
func (c *Cache) GetLog(idx uint64, log *raft.Log) error {
	c.mu.RLock()
	e := c.ring[idx%uint64(len(c.ring))]
	if n := len(c.staged); n > 0 && idx >= c.staged[0].Index && idx <= c.staged[n-1].Index {
		e = c.staged[idx-c.staged[0].Index]
	}
	c.mu.RUnlock()
	if e != nil && e.Index == idx {
		*log = *e
		return nil
	}
	return c.LogStore.GetLog(idx, log)
}

// StoreLog implements raft.LogStore.
func (c *Cache) StoreLog(log *raft.Log) error { return c.StoreLogs([]*raft.Log{log}) }

// StoreLogs implements raft.LogStore: the entries are cached once the store has them, and no longer staged.
func (c *Cache) StoreLogs(logs []*raft.Log) error {
	if err := c.LogStore.StoreLogs(logs); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range logs {
		c.put(l)
	}
	c.staged = nil
	return nil
}

// StageLogs implements raft.LogStager: GetLog answers with logs until StoreLogs or UnstageLogs returns.
func (c *Cache) StageLogs(logs []*raft.Log) {
	c.mu.Lock()
	c.staged = logs
	c.mu.Unlock()
}

// UnstageLogs implements raft.LogStager.
func (c *Cache) UnstageLogs() {
	c.mu.Lock()
	c.staged = nil
	c.mu.Unlock()
}

// put caches l, evicting the oldest entries until the budget holds it. Caller holds mu.
func (c *Cache) put(l *raft.Log) {
	n := uint64(len(c.ring))
	c.evict(l.Index % n)
	size := len(l.Data) + len(l.Extensions)
	if size > c.budget {
		return
	}
	// Entries are stored in index order, so the oldest cached ones are those just above l in the ring.
	for i := uint64(1); c.bytes+size > c.budget && i < n; i++ {
		c.evict((l.Index + i) % n)
	}
	c.ring[l.Index%n] = l
	c.bytes += size
}

func (c *Cache) evict(slot uint64) {
	if e := c.ring[slot]; e != nil {
		c.bytes -= len(e.Data) + len(e.Extensions)
		c.ring[slot] = nil
	}
}

// DeleteRange implements raft.LogStore, dropping the whole cache as raft.LogCache does.
func (c *Cache) DeleteRange(lo, hi uint64) error {
	c.mu.Lock()
	clear(c.ring)
	c.bytes = 0
	c.mu.Unlock()
	return c.LogStore.DeleteRange(lo, hi)
}
