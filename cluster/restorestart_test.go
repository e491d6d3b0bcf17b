package cluster

import (
	"bytes"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/storage"
)

// A start restores the newest raft snapshot only when it holds a state past Pebble's: one stored from a leader
// whose restore never began. A marker, a snapshot whose stream is not ahead (raft's index counts entries the
// state machine never saw), or no snapshot at all leave the start to Pebble.
func TestSnapshotAheadOfTheState(t *testing.T) {
	db, err := storage.Open("db", storage.Options{FS: vfs.NewMem(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fsm, err := storage.NewShardFSM(db, 2, nil, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	var at5 bytes.Buffer
	if err := storage.WriteEmptySnapshot(&at5, 5, 1); err != nil {
		t.Fatal(err)
	}
	if err := fsm.Restore(io.NopCloser(bytes.NewReader(at5.Bytes()))); err != nil {
		t.Fatal(err)
	}
	store := func(t *testing.T, index uint64, write func(raft.SnapshotSink) error) string {
		dir := t.TempDir()
		snaps, err := raft.NewFileSnapshotStore(dir, 2, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		storeSnapshot(t, snaps, index, 1, write)
		return dir
	}
	stream := func(b []byte) func(raft.SnapshotSink) error {
		return func(sink raft.SnapshotSink) error {
			if _, err := sink.Write(b); err != nil {
				return err
			}
			return sink.Close()
		}
	}
	fsm.SetLazySnapshots(true)
	marker, err := fsm.Snapshot()
	fsm.SetLazySnapshots(false)
	if err != nil {
		t.Fatal(err)
	}
	var at9 bytes.Buffer
	if err := storage.WriteEmptySnapshot(&at9, 9, 1); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		dir  string
		want bool
	}{
		{"no snapshots", filepath.Join(t.TempDir(), "none"), false},
		{"received, never restored", store(t, 9, stream(at9.Bytes())), true},
		{"stream at the state, raft's index past it", store(t, 9, stream(at5.Bytes())), false},
		{"behind the state", store(t, 4, stream(at5.Bytes())), false},
		{"a marker", store(t, 9, marker.Persist), false},
	} {
		if got, err := snapshotAhead(db, 2, c.dir); err != nil || got != c.want {
			t.Errorf("%s: ahead %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}
