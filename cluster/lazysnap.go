package cluster

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/storage"
)

// lazySnapshots is a shard group's snapshot store. The snapshots raft takes here are lazy markers
// (storage/lazysnap.go); one opened to be sent to a follower (or restored) is replaced by the shard's state as
// of now, written to a temporary file first because raft sends the size before the bytes. Snapshots received
// from a leader, and those of an older build, hold their state and pass through.
type lazySnapshots struct {
	raft.SnapshotStore
	dir string // temporary files; the FileSnapshotStore keeps its own under dir/snapshots
	db  *storage.DB
	fsm *storage.ShardFSM
	// materialized is told of each marker turned into state (logs, metrics); may be nil.
	materialized func(id string, bytes int64, took time.Duration)
}

const materializedPattern = "state-*.tmp"

func newLazySnapshots(inner raft.SnapshotStore, dir string, db *storage.DB, fsm *storage.ShardFSM) *lazySnapshots {
	// A crash while sending leaves a temporary file behind; nothing else uses them.
	if old, _ := filepath.Glob(filepath.Join(dir, materializedPattern)); len(old) > 0 {
		for _, f := range old {
			os.Remove(f)
		}
	}
	fsm.SetLazySnapshots(true)
	return &lazySnapshots{SnapshotStore: inner, dir: dir, db: db, fsm: fsm}
}

// Open implements raft.SnapshotStore.
func (s *lazySnapshots) Open(id string) (*raft.SnapshotMeta, io.ReadCloser, error) {
	meta, rc, err := s.SnapshotStore.Open(id)
	if err != nil || meta.Size != storage.LazySnapshotSize {
		return meta, rc, err
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("read snapshot %s: %w", id, err)
	}
	if !storage.IsLazySnapshot(data) {
		return meta, io.NopCloser(bytes.NewReader(data)), nil
	}
	// A start that must restore (a restore was interrupted) never finds a marker newest, since the snapshot being
	// restored was stored first; if it did, the state it would send is the half-written one.
	if restoring, err := s.db.Restoring(s.fsm.Shard()); err != nil || restoring {
		return nil, nil, fmt.Errorf("snapshot %s is a marker and shard %d's state is mid-restore (%v)", id, s.fsm.Shard(), err)
	}
	start := time.Now()
	f, size, err := s.materialize()
	if err != nil {
		return nil, nil, fmt.Errorf("materialize snapshot %s: %w", id, err)
	}
	if s.materialized != nil {
		s.materialized(id, size, time.Since(start))
	}
	m := *meta
	m.Size = size
	return &m, f, nil
}

// materialize writes the shard's current state to a temporary file, removed when the returned file is closed.
func (s *lazySnapshots) materialize() (*removeOnClose, int64, error) {
	f, err := os.CreateTemp(s.dir, materializedPattern)
	if err != nil {
		return nil, 0, err
	}
	rm := &removeOnClose{File: f}
	bw := bufio.NewWriterSize(f, 1<<20)
	_, err = s.fsm.WriteBackup(bw)
	if err == nil {
		err = bw.Flush()
	}
	var size int64
	if err == nil {
		size, err = f.Seek(0, io.SeekCurrent)
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		rm.Close()
		return nil, 0, err
	}
	return rm, size, nil
}

type removeOnClose struct{ *os.File }

func (r *removeOnClose) Close() error {
	err := r.File.Close()
	os.Remove(r.Name())
	return err
}
