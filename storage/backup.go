package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cockroachdb/pebble/v2"
	"github.com/klauspost/compress/zstd"
)

// BackupStats describes one shard stream: the applied index and term it reflects, its keys, and how many of
// them are memory records.
type BackupStats struct {
	Index, Term       uint64
	Records, Memories uint64
}

// WriteBackup streams the shard's state as it is now, in the snapshot format (a backup restores through raft's
// snapshot install), from a Pebble snapshot: applies go on meanwhile and nothing is held in memory. The caller
// passes a read barrier first, so the stream holds every write acknowledged before it.
func (f *ShardFSM) WriteBackup(w io.Writer) (BackupStats, error) {
	switch {
	case f.halted.Load():
		return BackupStats{}, ErrHalted
	case f.stopped.Load():
		return BackupStats{}, ErrStopped
	}
	snap := f.db.db.NewSnapshot()
	defer snap.Close()
	// A restore under way has deleted part of the state and not yet written the applied index: refuse rather
	// than stream that under the old index.
	if _, closer, err := snap.Get(restoreKey(f.shard)); err == nil {
		closer.Close()
		return BackupStats{}, fmt.Errorf("shard %d: a snapshot restore is under way", f.shard)
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return BackupStats{}, fmt.Errorf("shard %d restore marker: %w", f.shard, err)
	}
	// The applied index as of the snapshot itself, so header and records agree.
	v, closer, err := snap.Get(appliedKey(f.shard))
	var index, term uint64
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		return BackupStats{}, fmt.Errorf("shard %d applied index: %w", f.shard, err)
	default:
		if len(v) == 16 {
			index, term = binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:])
		}
		closer.Close()
	}
	s := &shardSnapshot{snap: snap, shard: f.shard, index: index, term: term}
	st, err := s.write(w)
	if err != nil {
		return st, fmt.Errorf("back up shard %d: %w", f.shard, err)
	}
	return st, nil
}

// WriteEmptySnapshot writes the stream of a shard holding nothing, at index and term: restoring it empties a
// shard (undoing a restore into a fresh cluster).
func WriteEmptySnapshot(w io.Writer, index, term uint64) error {
	zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		return err
	}
	b := append([]byte(nil), snapshotMagic...)
	b = append(b, snapshotVersion)
	b = binary.BigEndian.AppendUint64(b, index)
	b = binary.BigEndian.AppendUint64(b, term)
	b = binary.AppendUvarint(b, 0)
	b = binary.BigEndian.AppendUint64(b, 0)
	if _, err := zw.Write(b); err != nil {
		return err
	}
	return zw.Close()
}
