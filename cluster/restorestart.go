package cluster

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/storage"
)

// mustRestore reports whether shard's replica must restore its newest raft snapshot at start instead of starting
// from Pebble (NoSnapshotRestoreOnStart): a restore was interrupted (its marker is set), or raft stored a
// snapshot it received and the node stopped before the state machine began restoring it. Raft takes a stored
// snapshot's index as applied, so without the restore the entries between Pebble's state and it would never be
// applied.
func (n *Node) mustRestore(shard uint32) (bool, error) {
	if restoring, err := n.db.Restoring(shard); err != nil || restoring {
		return restoring, err
	}
	ahead, err := snapshotAhead(n.db, shard, n.snapshotDir(shard))
	if err != nil {
		// Raft's own restore would meet the same snapshot; start from Pebble as before, and say so.
		n.log.Warn("cannot read the newest raft snapshot's index", "shard", shard, "err", err)
		return false, nil
	}
	if ahead {
		n.log.Warn("the newest raft snapshot is past the state: restoring it", "shard", shard)
	}
	return ahead, nil
}

// snapshotAhead reports whether the newest raft snapshot in dir holds a state past the shard's applied index in
// db. A lazy snapshot holds none (it is a marker of a state this node had). A snapshot's index can be past the
// state it holds (raft counts entries the state machine never sees), so the stream's own header decides.
func snapshotAhead(db *storage.DB, shard uint32, dir string) (bool, error) {
	snaps, newest, err := newestSnapshot(dir)
	if err != nil || newest == nil || newest.Size == storage.LazySnapshotSize {
		return false, err
	}
	applied, _, err := db.Applied(shard)
	if err != nil || newest.Index <= applied {
		return false, err
	}
	_, rc, err := snaps.Open(newest.ID)
	if err != nil {
		return false, err
	}
	defer rc.Close()
	index, _, err := storage.SnapshotIndex(rc)
	if err != nil {
		return false, fmt.Errorf("snapshot %s: %w", newest.ID, err)
	}
	return index > applied, nil
}

// newestSnapshot opens the raft snapshot store in dir and returns it with its newest snapshot's metadata (nil,
// nil when dir holds none).
func newestSnapshot(dir string) (*raft.FileSnapshotStore, *raft.SnapshotMeta, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	snaps, err := raft.NewFileSnapshotStore(dir, 2, io.Discard)
	if err != nil {
		return nil, nil, err
	}
	metas, err := snaps.List()
	if err != nil || len(metas) == 0 {
		return snaps, nil, err
	}
	return snaps, metas[0], nil
}
