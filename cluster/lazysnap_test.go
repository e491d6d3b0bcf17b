package cluster

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

func lazyFSM(t *testing.T, shard uint32) (*storage.DB, *storage.ShardFSM) {
	t.Helper()
	db, err := storage.Open("db", storage.Options{FS: vfs.NewMem(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	fsm, err := storage.NewShardFSM(db, shard, nil, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	return db, fsm
}

// A shard group's snapshots are markers; opened, one is the shard's state as of the open, which a follower's
// state machine restores; a marker itself is refused by Restore without touching the state.
func TestLazySnapshotsMaterializeOnOpen(t *testing.T) {
	db, fsm := lazyFSM(t, 3)
	ids := memory.NewIDSource()
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	put := func(index uint64, user string) {
		cmd, err := storage.EncodePut([]memory.Memory{{ID: ids.New(at), UserID: user, Type: memory.Episodic,
			Text: "note " + user, OccurredAt: at, CreatedAt: at}})
		if err != nil {
			t.Fatal(err)
		}
		fsm.Apply(&raft.Log{Index: index, Term: 2, Type: raft.LogCommand, Data: cmd})
	}
	for i := range 20 {
		put(uint64(i+1), fmt.Sprintf("u%d", i%4))
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "state-stale.tmp"), []byte("left by a crash"), 0o644)
	inner, err := raft.NewFileSnapshotStore(dir, 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	store := newLazySnapshots(inner, dir, db, fsm)
	if left, _ := filepath.Glob(filepath.Join(dir, "state-*.tmp")); len(left) != 0 {
		t.Fatalf("stale temporary files kept: %v", left)
	}
	snap, err := fsm.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	storeSnapshot(t, store, 20, 2, snap.Persist)
	metas, err := store.List()
	if err != nil || len(metas) != 1 || metas[0].Size != storage.LazySnapshotSize {
		t.Fatalf("stored snapshots %+v, %v: want one marker", metas, err)
	}
	put(21, "later") // the state sent is the shard's at the open, past the marker's index

	meta, rc, err := store.Open(metas[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	followerDB, follower := lazyFSM(t, 3)
	if err := follower.Restore(rc); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "state-*.tmp")); len(left) != 0 {
		t.Fatalf("temporary files after the send: %v", left)
	}
	if meta.Index != 20 || meta.Size <= storage.LazySnapshotSize {
		t.Fatalf("opened meta %+v", meta)
	}
	if idx, term, _ := followerDB.Applied(3); idx != 21 || term != 2 {
		t.Fatalf("follower applied %d/%d, want 21/2", idx, term)
	}
	for _, user := range []string{"u0", "u3", "later"} {
		want, got := 0, 0
		db.ScanUser(3, user, func(memory.Memory) bool { want++; return true })
		followerDB.ScanUser(3, user, func(memory.Memory) bool { got++; return true })
		if got != want || want == 0 {
			t.Fatalf("%s: follower holds %d memories, leader %d", user, got, want)
		}
	}

	// A marker handed to Restore directly is refused before anything is wiped.
	_, raw, err := inner.Open(metas[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := follower.Restore(raw); err == nil {
		t.Fatal("a marker restored")
	}
	if idx, _, _ := followerDB.Applied(3); idx != 21 {
		t.Fatalf("a refused marker changed the state: applied %d", idx)
	}
}

// storeSnapshot stores a snapshot at index and term in snaps, written by write, which closes the sink as
// raft.FSMSnapshot.Persist does.
func storeSnapshot(t *testing.T, snaps raft.SnapshotStore, index, term uint64, write func(raft.SnapshotSink) error) {
	t.Helper()
	_, trans := raft.NewInmemTransport("")
	sink, err := snaps.Create(raft.SnapshotVersionMax, index, term, raft.Configuration{}, 1, trans)
	if err != nil {
		t.Fatal(err)
	}
	if err := write(sink); err != nil {
		t.Fatal(err)
	}
}
