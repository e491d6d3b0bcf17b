package storage

import (
	"sync"
	"sync/atomic"
	"time"
)

// syncPacer is the node's group commit. After each sync of the WAL, Pebble's flusher asks it how long to hold
// the next sync back (Pebble's WALMinSyncInterval); the writes that ask for a sync meanwhile then share it.
// It holds syncs back only while they have been covering several raft entries each. Under many writers the
// groups' appends then share fewer fdatasyncs, which cost CPU in the kernel as well as time, and raft, whose
// appends wait longer, hands each one more entries. A lone writer's syncs cover one entry each, so once the
// average has settled (a few dozen syncs after a burst) they are not held: a constant interval cost one client
// 0.66–1.07× its puts/s (docs/benchmarks.md, "Group commit"). Entries, not appends, are counted on purpose: an
// append of many entries carries the proposals of many writers, which a held sync lets raft batch further.
//
// The count is approximate, which a moving average tolerates: an append is counted before its commit (a failed
// one still counts), and what a WAL's closing sync at rotation covered is credited to the next sync.
type syncPacer struct {
	interval time.Duration // 0: never hold
	entries  atomic.Uint64 // what synced writes carried, counted by their callers (DB.SyncedWrites)
	syncs    atomic.Uint64 // syncs of the WAL
	held     atomic.Uint64 // syncs after which the next was held back

	mu   sync.Mutex // Pebble's flusher calls next, one at a time today (a rotation waits for the old one)
	seen uint64     // entries at the previous sync
	avg  float64    // entries a sync covered, a moving average over about the last eight syncs
}

// pacedAbove is the average number of entries a sync must have covered for the next to be held back: about
// one is a lone writer, and a few writers (1.5–3 entries a sync) lost more to the hold than they gained at
// 1.2 and 1.5 (docs/benchmarks.md, "Tables compressed only where they rest"); many writers cover ten or more.
const pacedAbove = 3.0

// next is Pebble's WALMinSyncInterval, called by its flusher after each sync.
func (p *syncPacer) next() time.Duration {
	p.syncs.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.entries.Load()
	n := float64(c - min(p.seen, c))
	p.seen = c
	p.avg += (n - p.avg) / 8
	if p.interval > 0 && p.avg >= pacedAbove {
		p.held.Add(1)
		return p.interval
	}
	return 0
}

// SyncedWrites is the counter that every writer asking this DB for synced writes under load adds what each
// carries to (raftstore.Options.Syncs: its raft entries), so that the group commit sees how much a sync
// covers.
func (d *DB) SyncedWrites() *atomic.Uint64 { return &d.pacer.entries }
