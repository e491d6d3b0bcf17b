package raftstore

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/hashicorp/raft"
)

// Store is a raft.LogStore and raft.StableStore for one raft group, kept
// under its own key prefix in a Pebble DB that other groups share. The
// caller owns the DB and closes it after every Store on it is done.
type Store struct {
	db    *pebble.DB
	keys  keys
	wo    *pebble.WriteOptions
	syncs *atomic.Uint64 // Options.Syncs; nil: not counted

	// writeMu serialises writers so the cached bounds are updated in the
	// same order as the batches commit. Raft appends from one goroutine but
	// truncates (DeleteRange) from the snapshot goroutine.
	writeMu sync.Mutex

	// boundsMu guards first and last, the cached FirstIndex and LastIndex
	// (0 when the log is empty). raft reads them on every append and RPC,
	// so they must not cost a seek.
	boundsMu    sync.RWMutex
	first, last uint64
}

var (
	_ raft.LogStore          = (*Store)(nil)
	_ raft.StableStore       = (*Store)(nil)
	_ raft.MonotonicLogStore = (*Store)(nil)
)

// IsMonotonic implements raft.MonotonicLogStore and answers false, on purpose. On the monotonic path raft
// empties the log after installing a snapshot but keeps its stale last-log index, and a follower whose log ran
// ahead of the snapshot then panics with "log not found" (hashicorp/raft#697; reproduced by sim/ with
// -sim.seed=102 -sim.monotonic). The other path only deletes the prefix up to the snapshot, which raft has
// used with raft-boltdb for years; the store tolerates the gaps it can leave. memcluster's raft fork now fixes
// the bug on both paths (third_party/raft/MEMCLUSTER.md); the answer stays false, the path run longest here.
func (s *Store) IsMonotonic() bool { return false }

// New returns the Store for the group whose keys live under prefix.
// Prefixes of groups sharing db must be prefix-free (none a prefix of
// another), e.g. a fixed-width version byte + big-endian shard id.
func New(db *pebble.DB, prefix []byte, opts Options) (*Store, error) {
	if len(prefix) == 0 {
		return nil, ErrEmptyPrefix
	}
	s := &Store{db: db, keys: newKeys(prefix), wo: pebble.Sync}
	if opts.NoSync {
		s.wo = pebble.NoSync
	} else {
		s.syncs = opts.Syncs
	}
	first, last, err := s.seekBounds()
	if err != nil {
		return nil, fmt.Errorf("open raft store %q: %w", prefix, err)
	}
	s.first, s.last = first, last
	return s, nil
}

// seekBounds reads the first and last log index from the DB. It is used on
// open and after a DeleteRange, never on the append path.
func (s *Store) seekBounds() (first, last uint64, err error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: s.keys.logLo, UpperBound: s.keys.logHi})
	if err != nil {
		return 0, 0, err
	}
	defer it.Close()
	if !it.First() {
		return 0, 0, it.Error()
	}
	var ok bool
	if first, ok = s.keys.logIndex(it.Key()); !ok {
		return 0, 0, fmt.Errorf("log key %x: %w", it.Key(), ErrCorrupt)
	}
	if !it.Last() { // First found a key, so only an iterator error gets here
		return 0, 0, it.Error()
	}
	if last, ok = s.keys.logIndex(it.Key()); !ok {
		return 0, 0, fmt.Errorf("log key %x: %w", it.Key(), ErrCorrupt)
	}
	return first, last, it.Error()
}

// FirstIndex implements raft.LogStore from the in-memory cache.
func (s *Store) FirstIndex() (uint64, error) {
	s.boundsMu.RLock()
	defer s.boundsMu.RUnlock()
	return s.first, nil
}

// LastIndex implements raft.LogStore from the in-memory cache.
func (s *Store) LastIndex() (uint64, error) {
	s.boundsMu.RLock()
	defer s.boundsMu.RUnlock()
	return s.last, nil
}

// GetLog implements raft.LogStore. A missing entry is raft.ErrLogNotFound,
// unwrapped, because raft compares against it with ==.
func (s *Store) GetLog(index uint64, l *raft.Log) error {
	v, closer, err := s.db.Get(s.keys.logKey(index))
	if errors.Is(err, pebble.ErrNotFound) {
		return raft.ErrLogNotFound
	}
	if err != nil {
		return fmt.Errorf("get log %d: %w", index, err)
	}
	defer closer.Close()
	if err := decodeLog(v, l); err != nil {
		return fmt.Errorf("get log %d: %w", index, err)
	}
	// The index is stored in both key and value; a mismatch means the value
	// was written under the wrong key, which must not reach raft.
	if l.Index != index {
		return fmt.Errorf("get log %d: entry says index %d: %w", index, l.Index, ErrCorrupt)
	}
	return nil
}

// StoreLog implements raft.LogStore.
func (s *Store) StoreLog(l *raft.Log) error {
	return s.StoreLogs([]*raft.Log{l})
}

// StoreLogs implements raft.LogStore: all entries go in one batch, so they
// become durable together with one WAL sync, which Pebble group-commits
// with the batches of the other groups on the DB.
func (s *Store) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	size := 0
	for _, l := range logs {
		size += s.keys.logKeyLen() + encodedSize(l)
	}
	b := s.db.NewBatchWithSize(size + 64*len(logs))
	defer b.Close()
	lo, hi := uint64(math.MaxUint64), uint64(0)
	for _, l := range logs {
		if err := s.setLog(b, l); err != nil {
			return fmt.Errorf("store logs %d-%d: %w", logs[0].Index, logs[len(logs)-1].Index, err)
		}
		lo, hi = min(lo, l.Index), max(hi, l.Index)
	}

	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.countSync(len(logs))
	if err := b.Commit(s.wo); err != nil {
		return fmt.Errorf("store logs %d-%d: %w", lo, hi, err)
	}
	s.boundsMu.Lock()
	if s.first == 0 || lo < s.first {
		s.first = lo
	}
	s.last = max(s.last, hi)
	s.boundsMu.Unlock()
	return nil
}

// setLog adds l to b, its key and entry written straight into the batch's buffer (no copy of either on the heap).
func (s *Store) setLog(b *pebble.Batch, l *raft.Log) error {
	size := encodedSize(l)
	op := b.SetDeferred(s.keys.logKeyLen(), size)
	s.keys.putLogKey(op.Key, l.Index)
	if n := len(appendLog(op.Value[:0], l)); n != size {
		// Never: encodedSize is exact. A longer entry went past the reservation (into the batch's spare bytes or
		// a new array); the batch is closed uncommitted.
		return fmt.Errorf("log %d: encoded %d bytes into the %d reserved", l.Index, n, size)
	}
	return op.Finish()
}

// countSync adds what a synced write carries to Options.Syncs: its raft entries, or 1.
func (s *Store) countSync(n int) {
	if s.syncs != nil {
		s.syncs.Add(uint64(n))
	}
}

// DeleteRange implements raft.LogStore with one range tombstone, so
// compacting a million entries costs the same as compacting one.
func (s *Store) DeleteRange(lo, hi uint64) error {
	if lo > hi {
		return nil
	}
	end := s.keys.logHi
	if hi < math.MaxUint64 {
		end = s.keys.logKey(hi + 1)
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.DeleteRange(s.keys.logKey(lo), end, nil); err != nil {
		return fmt.Errorf("delete logs %d-%d: %w", lo, hi, err)
	}

	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	// Synced like appends: a lost tail truncation would resurrect entries
	// that raft already replaced on this follower.
	s.countSync(1)
	if err := b.Commit(s.wo); err != nil {
		return fmt.Errorf("delete logs %d-%d: %w", lo, hi, err)
	}
	s.boundsMu.RLock()
	first, last := s.first, s.last
	s.boundsMu.RUnlock()
	if first == 0 || hi < first || lo > last {
		return nil // nothing cached was inside the range
	}
	// A bound was deleted. Re-seek rather than compute it: the index
	// sequence may have gaps, and truncation is rare enough to afford it.
	first, last, err := s.seekBounds()
	if err != nil {
		return fmt.Errorf("delete logs %d-%d: reload bounds: %w", lo, hi, err)
	}
	s.boundsMu.Lock()
	s.first, s.last = first, last
	s.boundsMu.Unlock()
	return nil
}
