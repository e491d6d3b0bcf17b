package nodeindex

import (
	"errors"
	"fmt"

	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/raftstore"
	"github.com/memcluster/memcluster/storage"
)

// raftTail reads a shard's raft log from the node's Pebble DB, before the shard's raft group starts, so an index
// that a crash left behind its records (bleve's last batches, the vectors' checkpoint) reads only the entries it
// missed (retrieval.TailReader).
type raftTail struct {
	db    *storage.DB
	shard uint32
}

// Tail implements retrieval.TailReader.
func (r raftTail) Tail(from, to, term uint64, fn func(storage.Command)) (bool, error) {
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
