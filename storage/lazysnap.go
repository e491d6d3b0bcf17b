package storage

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/hashicorp/raft"
)

// A lazy snapshot stands for a shard's state without holding it. The state is in Pebble, durable before raft
// compacts its log (Snapshot syncs the WAL), and a replica restarts from Pebble, not from its snapshots
// (NoSnapshotRestoreOnStart). What a raft snapshot is for is then only where raft starts on restart (its
// applied index, the log after it) and what a leader sends a follower that its log no longer covers. A lazy
// snapshot is a marker of the shard, index and term, so taking one costs a WAL sync and a small file instead of
// a copy of the shard, and raft can take them often: a restart reads raft's log from the last one instead of
// from the start. The snapshot store of the group (cluster) replaces a marker opened for sending with the
// shard's state as of that moment (WriteBackup), which is at or after the marker's index: the receiver's state
// machine skips the entries in between, as after a restart.
//
//	"MCLAZY" [version u8 = 1] [shard u32] [index u64] [term u64]
var lazyMagic = []byte("MCLAZY")

// LazySnapshotSize is the size of a lazy snapshot: a raft snapshot of another size holds the state itself.
const LazySnapshotSize = 6 + 1 + 4 + 16

type lazySnapshot struct {
	shard       uint32
	index, term uint64
}

// Persist implements raft.FSMSnapshot.
func (s lazySnapshot) Persist(sink raft.SnapshotSink) error {
	b := append([]byte(nil), lazyMagic...)
	b = append(b, 1)
	b = binary.BigEndian.AppendUint32(b, s.shard)
	b = binary.BigEndian.AppendUint64(b, s.index)
	b = binary.BigEndian.AppendUint64(b, s.term)
	if _, err := sink.Write(b); err != nil {
		sink.Cancel()
		return fmt.Errorf("persist shard %d snapshot marker: %w", s.shard, err)
	}
	return sink.Close()
}

// Release implements raft.FSMSnapshot.
func (lazySnapshot) Release() {}

// IsLazySnapshot reports whether data, a whole raft snapshot, is a lazy snapshot's marker.
func IsLazySnapshot(data []byte) bool {
	return len(data) == LazySnapshotSize && bytes.HasPrefix(data, lazyMagic)
}

// SetLazySnapshots makes Snapshot return lazy snapshots (call it before raft starts). Their group's snapshot
// store must materialize a marker it opens: see lazySnapshot.
func (f *ShardFSM) SetLazySnapshots(on bool) { f.lazy = on }

// refuseLazy reads the start of a snapshot stream and fails if it is a lazy marker, which holds no state to
// restore: a store that hands one over has not materialized it. The returned reader replays what was read.
func refuseLazy(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(len(lazyMagic))
	if bytes.Equal(head, lazyMagic) {
		return nil, fmt.Errorf("%w: a lazy snapshot marker holds no state to restore", ErrBadSnapshot)
	}
	return br, nil
}

// Shard is the shard this state machine applies.
func (f *ShardFSM) Shard() uint32 { return f.shard }
