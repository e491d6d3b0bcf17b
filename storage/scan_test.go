package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/memory"
)

// scanFixture puts n memories of three users into shard 4 (and one of shard 5, which no scan of 4 may return).
func scanFixture(t *testing.T, n int) *DB {
	t.Helper()
	db := openMem(t, vfs.NewMem())
	t.Cleanup(func() { db.Close() })
	f, err := NewShardFSM(db, 4, &recIndexer{}, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	var logs []*raft.Log
	for i := 0; i < n; i += 100 {
		var ms []memory.Memory
		for j := i; j < min(i+100, n); j++ {
			ms = append(ms, mem(fmt.Sprintf("u%d", j%3), fmt.Sprintf("M%05d", j), fmt.Sprintf("memory %d", j)))
		}
		logs = append(logs, putLog(t, uint64(len(logs)+1), ms...))
	}
	f.ApplyBatch(logs)
	other, err := NewShardFSM(db, 5, &recIndexer{}, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	other.ApplyBatch([]*raft.Log{putLog(t, 1, mem("u0", "OTHER", "shard five"))})
	return db
}

func sequentialIDs(t *testing.T, db *DB) []string {
	t.Helper()
	var ids []string
	lo, hi := dataRange(4)
	if err := db.scan(lo, hi, func(m memory.Memory) bool { ids = append(ids, m.UserID+"/"+m.ID); return true }); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestScanShardDecodesAheadInKeyOrder: the parallel scan hands fn exactly what a sequential scan of the shard
// does, in the same order, across many batches and a last partial one; an empty shard calls fn never.
func TestScanShardDecodesAheadInKeyOrder(t *testing.T) {
	for _, n := range []int{0, 1, scanBatch, 10*scanBatch + 7} {
		db := scanFixture(t, n)
		want := sequentialIDs(t, db)
		var got []string
		err := db.ScanShard(4, func(m memory.Memory) bool {
			if m.Text == "" || len(m.Embedding) != 2 {
				t.Fatalf("%s decoded without its text or embedding", m.ID)
			}
			got = append(got, m.UserID+"/"+m.ID)
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n || strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("n=%d: scan gave %d memories, sequential %d; first difference in %v", n, len(got), len(want), firstDiff(got, want))
		}
	}
}

// TestScanShardStopsAndNamesABadRecord: fn returning false ends the scan at once with no error; a record that
// does not decode fails the scan with its key, after fn saw every record before it and none after.
func TestScanShardStopsAndNamesABadRecord(t *testing.T) {
	db := scanFixture(t, 5*scanBatch)
	seen := 0
	if err := db.ScanShard(4, func(memory.Memory) bool { seen++; return seen < 300 }); err != nil || seen != 300 {
		t.Fatalf("stop after 300: saw %d, err %v", seen, err)
	}

	ids := sequentialIDs(t, db)
	bad := ids[700] // u1/M…: a record in the third batch
	user, id, _ := strings.Cut(bad, "/")
	if err := db.db.Set(MemoryKey(4, user, id), []byte{byte(RecordF32), 0xff}, nil); err != nil {
		t.Fatal(err)
	}
	seen = 0
	err := db.ScanShard(4, func(memory.Memory) bool { seen++; return true })
	if !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), fmt.Sprintf("%x", MemoryKey(4, user, id))) {
		t.Fatalf("bad record: %v", err)
	}
	if seen != 700 {
		t.Fatalf("fn saw %d records before the bad one, want 700", seen)
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("position %d: %s vs %s", i, a[i], b[i])
		}
	}
	return "length"
}

// TestScanShardPanicClosesTheIterator: a panic in fn leaves no stage running and no iterator open behind it, so
// the DB closes cleanly after the caller recovers.
func TestScanShardPanicClosesTheIterator(t *testing.T) {
	for range 20 {
		db := openMem(t, vfs.NewMem())
		f, err := NewShardFSM(db, 4, &recIndexer{}, slog.New(slog.DiscardHandler), nil)
		if err != nil {
			t.Fatal(err)
		}
		var ms []memory.Memory
		for j := range 3 * scanBatch {
			ms = append(ms, mem("u", fmt.Sprintf("M%05d", j), "x"))
		}
		f.ApplyBatch([]*raft.Log{putLog(t, 1, ms...)})
		func() {
			defer func() { _ = recover() }()
			seen := 0
			_ = db.ScanShard(4, func(memory.Memory) bool {
				if seen++; seen == 10 {
					panic("fn fails")
				}
				return true
			})
		}()
		if err := db.Close(); err != nil {
			t.Fatalf("close after a panic in fn: %v", err)
		}
	}
}
