package fulltext

import "sync/atomic"

// A Meter adds up what the caches of the indexes sharing it hold and how often they serve: a node's shard
// indexes report to one Meter, which the node exports as metrics and counts as heap at rest when it paces its
// collector (the caches are bounded and live from search to search, as the vector slabs do).
type Meter struct {
	UserPostings    CacheCounts // users' documents per segment (Options.UserPostingsCache)
	DecodedPostings CacheCounts // long posting lists kept decoded (Options.DecodedPostingsCache)
}

// NewMeter returns a Meter at zero.
func NewMeter() *Meter { return &Meter{} }

// Bytes is what both caches of the Meter's indexes hold now.
func (m *Meter) Bytes() int64 {
	if m == nil {
		return 0
	}
	return m.UserPostings.Bytes() + m.DecodedPostings.Bytes()
}

// CacheCounts are one kind of cache's figures over the indexes of a Meter.
type CacheCounts struct {
	bytes, hits, misses, evictions atomic.Int64
}

// Bytes is what the caches hold now, entries' overheads counted.
func (c *CacheCounts) Bytes() int64 { return c.bytes.Load() }

// Hits is how many look-ups found their entry kept.
func (c *CacheCounts) Hits() int64 { return c.hits.Load() }

// Misses is how many look-ups did not (the entry was read, and kept if it fit).
func (c *CacheCounts) Misses() int64 { return c.misses.Load() }

// Evictions is how many entries left to make room for others.
func (c *CacheCounts) Evictions() int64 { return c.evictions.Load() }
