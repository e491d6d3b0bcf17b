package nodeindex

import (
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/raftstore"
	"github.com/memcluster/memcluster/storage"
)

// raftTail reads a shard's raft log from the node's Pebble DB, before the shard's raft group starts, so a full-text
// index that a crash left behind its records is re-fed from the entries it missed (retrieval.TailReader).
type raftTail struct {
	db      *storage.DB
	shard   uint32
	snapDir string // the shard's raft snapshots
}

// Tail implements retrieval.TailReader.
func (r raftTail) Tail(from, to, term uint64, fn func(storage.Command)) (bool, error) {
	if ok, err := r.noSnapshotAfter(from); !ok || err != nil {
		return false, err
	}
	store, err := raftstore.New(r.db.Pebble(), storage.RaftPrefix(r.shard), raftstore.Options{})
	if err != nil {
		return false, fmt.Errorf("tail of shard %d: %w", r.shard, err)
	}
	if first, _ := store.FirstIndex(); first == 0 || first > from+1 {
		return false, nil
	}
	if last, _ := store.LastIndex(); last < to {
		return false, nil
	}
	var l raft.Log
	for i := from + 1; i <= to; i++ {
		if err := store.GetLog(i, &l); errors.Is(err, raft.ErrLogNotFound) {
			return false, nil // a gap: the store tolerates those after a snapshot install
		} else if err != nil {
			return false, fmt.Errorf("tail of shard %d: %w", r.shard, err)
		}
		if i == to && l.Term != term {
			return false, nil // the log at the applied index is not the one the records applied
		}
		if l.Type != raft.LogCommand {
			continue
		}
		c, err := storage.DecodeCommand(l.Data)
		if err != nil {
			return false, nil // the replica will halt on it when raft applies it; the full re-feed is the safe side
		}
		fn(c)
	}
	return true, nil
}

// noSnapshotAfter reports whether no retained snapshot is newer than index from. An installed snapshot replaced
// the records without the entries it stands for (the log may still hold stale ones below its index), and a
// snapshot taken here is rare enough in a crash's short tail not to be worth telling apart.
func (r raftTail) noSnapshotAfter(from uint64) (bool, error) {
	snaps, err := raft.NewFileSnapshotStore(r.snapDir, 2, io.Discard)
	if err != nil {
		return false, fmt.Errorf("snapshots of shard %d: %w", r.shard, err)
	}
	metas, err := snaps.List()
	if err != nil {
		return false, fmt.Errorf("snapshots of shard %d: %w", r.shard, err)
	}
	for _, m := range metas {
		if m.Index > from {
			return false, nil
		}
	}
	return true, nil
}
