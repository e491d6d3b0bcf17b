package raftstore

import "sync/atomic"

// Options configures a Store. The zero value is the production default.
type Options struct {
	// NoSync disables the fsync after StoreLogs, DeleteRange and Set.
	// Raft assumes an acknowledged write is durable (a vote or an appended
	// entry must survive a crash), so only tests and benchmarks that
	// measure the cost of durability should set it. It is inverted ("No")
	// so that a zero Options is durable: a forgotten field must not
	// silently drop fsync.
	NoSync bool
	// Syncs, when set, counts what the store's synced writes carry (each raft entry appended; a truncation or
	// a stable-store write as one), so that whoever paces the DB's WAL syncs sees how much each sync covers
	// (storage.DB.SyncedWrites: the groups of a node share one Pebble WAL, and under load many entries can
	// share one sync).
	Syncs *atomic.Uint64
}

// DefaultOptions returns the defaults: fsync on every write.
func DefaultOptions() Options { return Options{} }
