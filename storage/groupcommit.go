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
// appends wait longer, hands each one more entries. A lone writer, each sync covering its one entry, never
// waits: a fixed interval cost one client about a seventh of its puts/s (docs/benchmarks.md, "Group commit").
type syncPacer struct {
	interval time.Duration // 0: never hold
	entries  atomic.Uint64 // what synced writes carried, counted by their callers (DB.SyncedWrites)
	syncs    atomic.Uint64 // syncs of the WAL
	held     atomic.Uint64 // syncs after which the next was held back

	mu   sync.Mutex // Pebble's flusher calls next; a WAL's rotation may briefly run two flushers
	seen uint64     // entries at the previous sync
	avg  float64    // entries a sync covered, a moving average over about the last eight syncs
}

// pacedAbove is the average number of entries a sync must have covered for the next to be held back: about
// one is a lone writer.
const pacedAbove = 1.5

// next is Pebble's WALMinSyncInterval, called by its flusher after each sync.
func (p *syncPacer) next() time.Duration {
	c := p.entries.Load()
	p.syncs.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	n := float64(c - p.seen)
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
