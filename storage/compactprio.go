package storage

import (
	"runtime"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/memcluster/memcluster/internal/threadprio"
)

// lowerCompactions is the CompactionBegin listener that moves each of Pebble's compactions that rewrites tables
// to a thread steps nice values below the process's. Pebble runs every compaction on a goroutine of its own that
// ends with it (DB.compact), and calls CompactionBegin on that goroutine: the goroutine takes its thread
// (LockOSThread) and never gives it back, so the lowered thread ends with the goroutine and no other goroutine
// runs on it (internal/threadprio). A move or delete-only compaction only edits the LSM's manifest, under
// Pebble's mutex, and keeps the process's priority. Where the thread cannot be lowered (the main thread, which
// memnode keeps for its main goroutine, or not Linux) the compaction runs at the process's priority. lowered
// counts the compactions that ran lowered (DiskStats.LoweredCompactions). A compaction that begins while urgent
// reports true (level 0 so deep that the node holds or is about to hold new writes, writePressure) keeps the
// process's priority: the writes wait for it, and lowered it would share a core with the deferred indexing.
func lowerCompactions(steps int, lowered *atomic.Int64, urgent func() bool) func(pebble.CompactionInfo) {
	return func(info pebble.CompactionInfo) {
		if !rewritesTables(info) || urgent() {
			return
		}
		runtime.LockOSThread()
		if _, err := threadprio.Lower(steps); err != nil {
			runtime.UnlockOSThread()
			return
		}
		lowered.Add(1)
	}
}

// rewritesTables reports whether a compaction reads and writes tables: a move or delete-only one only edits the
// manifest.
func rewritesTables(info pebble.CompactionInfo) bool {
	return info.Reason != "move" && info.Reason != "delete-only"
}
