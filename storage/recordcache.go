package storage

import (
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// recordCache holds the encoded bytes of records GetMemory has read, so that a search's few record reads cost a
// map look-up whatever the shard holds: a record in a large shard's tables cost 2–3 µs a read through Pebble's
// levels against under 1 µs in a small shard's memtable (storage/DESIGN.md, "Record cache").
//
// Writers keep it coherent. Before a batch commits, hold drops every record key it writes (a range deletion, or
// a kind the scan does not know, empties the cache) and holds additions off the parts it touched; after the
// commit, release lets them in again. A read that misses remembers its part's generation before it reads
// Pebble and adds what it read only if no hold began or ended meanwhile. So the cache never answers with a value
// older than Pebble's: not during a commit (the key is gone, and a miss reads Pebble) and not after it (a value
// read before the commit is refused). Values are copies of Pebble's bytes and never written again.
type recordCache struct {
	seed  maphash.Seed
	parts [recordCacheParts]recordPart
	// budget is each part's share of the cache's size, in bytes of keys and values plus an overhead per entry.
	budget       int64
	hits, misses atomic.Uint64
}

const (
	recordCacheParts = 16
	// recordEntryOverhead approximates an entry's map slot, string and slice headers.
	recordEntryOverhead = 64
)

type recordPart struct {
	mu sync.Mutex
	// gen moves at every hold and release of this part; a miss adds its read only if gen did not move.
	gen uint64
	// held counts the commits in flight that write to this part; nothing is added while it is not 0.
	held  int
	m     map[string][]byte
	bytes int64
}

func newRecordCache(size int64) *recordCache {
	c := &recordCache{seed: maphash.MakeSeed(), budget: max(size/recordCacheParts, 1)}
	for i := range c.parts {
		c.parts[i].m = make(map[string][]byte)
	}
	return c
}

func (c *recordCache) part(k []byte) *recordPart {
	return &c.parts[c.partOf(k)]
}

func (c *recordCache) partOf(k []byte) int {
	return int(maphash.Bytes(c.seed, k) % recordCacheParts)
}

// get returns k's cached value, or, on a miss, the generation to hand to add with what the caller reads.
func (c *recordCache) get(k []byte) (v []byte, gen uint64, ok bool) {
	p := c.part(k)
	p.mu.Lock()
	v, ok = p.m[string(k)]
	gen = p.gen
	p.mu.Unlock()
	if ok {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	return v, gen, ok
}

// add caches v for k, read from Pebble after get returned gen; nothing if a hold began or ended in the part since.
// Entries are evicted at random (the map's iteration order) until the part is within its budget.
func (c *recordCache) add(k, v []byte, gen uint64) {
	size := int64(len(k) + len(v) + recordEntryOverhead)
	if size > c.budget {
		return
	}
	p := c.part(k)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gen != gen || p.held > 0 {
		return
	}
	if old, ok := p.m[string(k)]; ok { // a reader raced another to the same miss
		delete(p.m, string(k))
		p.bytes -= int64(len(k) + len(old) + recordEntryOverhead)
	}
	for ek, ev := range p.m {
		if p.bytes+size <= c.budget {
			break
		}
		delete(p.m, ek)
		p.bytes -= int64(len(ek) + len(ev) + recordEntryOverhead)
	}
	p.m[string(k)] = v
	p.bytes += size
}

// heldParts is a set of parts, one bit each.
type heldParts uint32

// holdPart drops k (if k is not nil) from part i and holds additions off it, once per hold.
func (c *recordCache) holdPart(i int, k []byte, held *heldParts) {
	p := &c.parts[i]
	p.mu.Lock()
	defer p.mu.Unlock()
	if *held&(1<<i) == 0 {
		*held |= 1 << i
		p.held++
		p.gen++
	}
	if k == nil {
		clear(p.m)
		p.bytes = 0
	} else if v, ok := p.m[string(k)]; ok {
		delete(p.m, string(k))
		p.bytes -= int64(len(k) + len(v) + recordEntryOverhead)
	}
}

// holdAll empties the cache and holds additions off every part.
func (c *recordCache) holdAll(held heldParts) heldParts {
	for i := range c.parts {
		c.holdPart(i, nil, &held)
	}
	return held
}

// hold drops every record b writes and holds additions off their parts until release; called before b's commit.
func (c *recordCache) hold(b *pebble.Batch) heldParts {
	var held heldParts
	r := b.Reader()
	for {
		kind, k, _, ok, err := r.Next()
		if err != nil {
			return c.holdAll(held)
		}
		if !ok {
			return held
		}
		switch kind {
		case pebble.InternalKeyKindSet, pebble.InternalKeyKindSetWithDelete, pebble.InternalKeyKindDelete,
			pebble.InternalKeyKindSingleDelete, pebble.InternalKeyKindDeleteSized, pebble.InternalKeyKindMerge:
			if isMemoryKey(k) {
				c.holdPart(c.partOf(k), k, &held)
			}
		case pebble.InternalKeyKindLogData:
		default: // range deletions and kinds this scan does not know: fail safe
			return c.holdAll(held)
		}
	}
}

// release ends a hold, after the commit (or its failure).
func (c *recordCache) release(held heldParts) {
	for i := range c.parts {
		if held&(1<<i) == 0 {
			continue
		}
		p := &c.parts[i]
		p.mu.Lock()
		p.held--
		p.gen++
		p.mu.Unlock()
	}
}

// isMemoryKey reports whether k is a record's key (MemoryKey).
func isMemoryKey(k []byte) bool {
	return len(k) > 5 && k[0] == spaceShard && k[5] == subData
}

// RecordCacheStats counts GetMemory's reads answered by the record cache and those that read Pebble.
type RecordCacheStats struct {
	Hits, Misses uint64
}

// RecordCacheStats reports the record cache's counters; zero when it is off.
func (d *DB) RecordCacheStats() RecordCacheStats {
	if d.records == nil {
		return RecordCacheStats{}
	}
	return RecordCacheStats{Hits: d.records.hits.Load(), Misses: d.records.misses.Load()}
}

// commit commits b, holding the records it writes out of the record cache meanwhile. Every batch this package
// writes goes through it.
func (d *DB) commit(b *pebble.Batch, o *pebble.WriteOptions) error {
	if d.records == nil {
		return b.Commit(o)
	}
	held := d.records.hold(b)
	defer d.records.release(held)
	return b.Commit(o)
}

// deleteRange deletes [lo, hi) outside a batch, with the record cache held off.
func (d *DB) deleteRange(lo, hi []byte, o *pebble.WriteOptions) error {
	if d.records == nil {
		return d.db.DeleteRange(lo, hi, o)
	}
	held := d.records.holdAll(0)
	defer d.records.release(held)
	return d.db.DeleteRange(lo, hi, o)
}

// getRecord reads a record's bytes through the record cache.
func (d *DB) getRecord(k []byte) ([]byte, error) {
	if d.records == nil {
		return d.get(k)
	}
	v, gen, ok := d.records.get(k)
	if ok {
		return v, nil
	}
	v, err := d.get(k)
	if err == nil && v != nil {
		d.records.add(k, v, gen)
	}
	return v, err
}
