package sim

import (
	"fmt"
	"log/slog"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/storage"
)

// ReplayStats says what rebuilding one replica took.
type ReplayStats struct {
	SnapshotIndex uint64 // raft index of the snapshot restored; 0 when the replica had none
	Entries       int    // log entries after the snapshot handed to the state machine
}

// replayReplica rebuilds r's shard on a fresh DB the way a restarting node would: restore r's latest snapshot,
// then apply r's log after it. The result must equal r's live keyspace. Raft must be stopped.
func replayReplica(r *replica, log *slog.Logger) ([]kv, ReplayStats, error) {
	var st ReplayStats
	db, err := storage.Open("replay", storage.Options{FS: vfs.NewMem(), CacheSize: 1 << 20, Logger: log})
	if err != nil {
		return nil, st, fmt.Errorf("open replay db: %w", err)
	}
	defer db.Close()
	fsm, err := storage.NewShardFSM(db, shardID, nil, log, nil)
	if err != nil {
		return nil, st, err
	}
	if st.SnapshotIndex, err = restoreLatest(r.snaps, fsm); err != nil {
		return nil, st, err
	}
	if st.Entries, err = applyLog(r.store, fsm, st.SnapshotIndex); err != nil {
		return nil, st, err
	}
	if fsm.Halted() {
		return nil, st, fmt.Errorf("%w: replay of n%d", ErrHalted, r.id)
	}
	kvs, err := dumpShard(db)
	return kvs, st, err
}

func restoreLatest(snaps raft.SnapshotStore, fsm *storage.ShardFSM) (uint64, error) {
	metas, err := snaps.List()
	if err != nil || len(metas) == 0 {
		return 0, err
	}
	meta, rc, err := snaps.Open(metas[0].ID)
	if err != nil {
		return 0, fmt.Errorf("open snapshot %s: %w", metas[0].ID, err)
	}
	if err := fsm.Restore(rc); err != nil {
		return 0, err
	}
	return meta.Index, nil
}

// applyLog feeds the entries after index from to fsm in batches, passing only what raft passes to a
// BatchingFSM (commands and configurations).
func applyLog(logs raft.LogStore, fsm *storage.ShardFSM, from uint64) (int, error) {
	first, err := logs.FirstIndex()
	if err != nil {
		return 0, err
	}
	last, err := logs.LastIndex()
	if err != nil {
		return 0, err
	}
	if last == 0 {
		return 0, nil
	}
	if first > from+1 {
		return 0, fmt.Errorf("%w: log starts at %d, snapshot ends at %d", ErrReplayMismatch, first, from)
	}
	var batch []*raft.Log
	n := 0
	for i := from + 1; i <= last; i++ {
		l := new(raft.Log)
		if err := logs.GetLog(i, l); err != nil {
			return n, fmt.Errorf("read log %d: %w", i, err)
		}
		if l.Type == raft.LogCommand || l.Type == raft.LogConfiguration {
			batch = append(batch, l)
			n++
		}
		if len(batch) == 32 || i == last {
			if len(batch) > 0 {
				fsm.ApplyBatch(batch)
			}
			batch = batch[:0]
		}
	}
	return n, nil
}
