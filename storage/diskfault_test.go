package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/memory"
)

// Disk faults injected with Pebble's errorfs. What Pebble does with them decides what the state machine can do:
//   - a failed flush or compaction (sstable write) is retried by Pebble; commits stall once the memtables are
//     full, so ShardFSM's apply blocks inside Commit and resumes when the disk does;
//   - a failed read during apply (EIO) comes back as an error: ShardFSM retries the whole batch with backoff;
//   - a failed WAL or MANIFEST write is fatal in Pebble (it panics with its commit pipeline wedged), so it
//     cannot be tested in-process; read-only mode exists to stop taking writes before the disk gets there.

// failOps fails operations of kind rw on files whose name matches pattern with errno, like a full (ENOSPC) or
// failing (EIO) disk.
func failOps(rw errorfs.OpReadWrite, pattern string, errno syscall.Errno) errorfs.Injector {
	return errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind.ReadOrWrite() != rw {
			return nil
		}
		if ok, _ := filepath.Match(pattern, filepath.Base(op.Path)); !ok {
			return nil
		}
		return &os.PathError{Op: "inject", Path: op.Path, Err: errno}
	})
}

// countingHandler counts log records by level and message, to check "logged once per episode".
type countingHandler struct {
	mu   sync.Mutex
	msgs map[string]int
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *countingHandler) WithGroup(string) slog.Handler            { return h }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs[r.Level.String()+" "+r.Message]++
	return nil
}

func (h *countingHandler) count(prefix string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for m, c := range h.msgs {
		if strings.HasPrefix(m, prefix) {
			n += c
		}
	}
	return n
}

// waitFor polls cond; the deadline only bounds a hung test, it asserts nothing about speed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

func faultyDB(t *testing.T, inj errorfs.Injector, log *slog.Logger) *DB {
	t.Helper()
	db, err := Open("db", Options{FS: errorfs.Wrap(vfs.NewMem(), inj), Logger: log, MinFreeBytes: -1,
		CacheSize: 1, MemTableSize: 4 << 20, WriteRetryMin: time.Millisecond, WriteRetryMax: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func applyAsync(f *ShardFSM, logs ...*raft.Log) chan []any {
	done := make(chan []any, 1)
	go func() { done <- f.ApplyBatch(logs) }()
	return done
}

// A full disk that fails sstable writes: Pebble keeps retrying the flushes and stalls commits once its
// memtables are full, so the apply loop blocks (nothing lost, nothing skipped), the node reports read-only,
// and every entry applies once the disk has room again.
func TestFullDiskBlocksApplyUntilItRecovers(t *testing.T) {
	tog := &errorfs.Toggle{Injector: failOps(errorfs.OpIsWrite, "*.sst", syscall.ENOSPC)}
	db := faultyDB(t, tog, quietLog())
	defer db.Close()
	f, _ := NewShardFSM(db, 1, nil, quietLog(), nil)
	applyOK(t, f, []*raft.Log{putLog(t, 1, mem("u", "A", "a"))})

	tog.On()
	// Each batch is over half of the 4 MiB memtable faultyDB asks for, so it must be flushed to an sstable on its own.
	var batches [][]*raft.Log
	for b := range 5 {
		var ms []memory.Memory
		for i := range 100 {
			ms = append(ms, mem("u", fmt.Sprintf("B%d-%03d", b, i), strings.Repeat("x", 30000)))
		}
		batches = append(batches, []*raft.Log{putLog(t, uint64(b+2), ms...)})
	}
	done := make(chan error, 1)
	go func() {
		for _, b := range batches {
			if r := f.ApplyBatch(b)[0].(ApplyResult); r.Err != nil {
				done <- r.Err
				return
			}
		}
		done <- nil
	}()
	waitFor(t, "read-only mode", func() bool { return db.WriteHealth() != nil })
	if err := db.WriteHealth(); !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("WriteHealth = %v, want ErrReadOnly naming a full disk", err)
	}
	select {
	case err := <-done:
		t.Fatalf("all batches committed while no sstable could be written (%v): expected a write stall", err)
	default:
	}

	tog.Off()
	if err := <-done; err != nil {
		t.Fatalf("apply after the disk recovered: %v", err)
	}
	if f.AppliedIndex() != 6 {
		t.Fatalf("applied index %d, want 6", f.AppliedIndex())
	}
	n := 0
	_ = db.ScanShard(1, func(memory.Memory) bool { n++; return true })
	if n != 501 {
		t.Fatalf("%d memories after recovery, want 501", n)
	}
	waitFor(t, "writable again", func() bool { return db.WriteHealth() == nil })
}

// A disk that fails reads during apply: the batch is retried with backoff, the applied index never moves past
// the entry, the episode is logged once, and the entry applies exactly once when the disk recovers.
func TestReadErrorsRetryUntilDiskRecovers(t *testing.T) {
	counter := &errorfs.Counter{Injector: failOps(errorfs.OpIsRead, "*.sst", syscall.EIO)}
	tog := &errorfs.Toggle{Injector: counter}
	logs := &countingHandler{msgs: map[string]int{}}
	db := faultyDB(t, tog, slog.New(logs))
	defer db.Close()
	f, _ := NewShardFSM(db, 1, nil, slog.New(logs), nil)
	applyOK(t, f, []*raft.Log{putLog(t, 1, mem("u", "A", "a"), mem("u", "B", "b"))})
	if err := db.Pebble().Flush(); err != nil { // the records now live in an sstable
		t.Fatal(err)
	}

	tog.On()
	del, _ := EncodeDelete(DeletePayload{UserID: "u", IDs: []string{"A"}, RequestID: "r1"})
	done := applyAsync(f, &raft.Log{Index: 2, Term: 1, Type: raft.LogCommand, Data: del})
	waitFor(t, "several failed attempts", func() bool { return counter.Load() >= 10 })
	if f.AppliedIndex() != 1 {
		t.Fatalf("applied index %d while entry 2 could not be applied", f.AppliedIndex())
	}
	if err := db.WriteHealth(); !errors.Is(err, ErrReadOnly) ||
		!strings.Contains(err.Error(), "input/output error") {
		t.Fatalf("WriteHealth = %v, want ErrReadOnly naming the I/O error", err)
	}

	tog.Off()
	res := <-done
	if r := res[0].(ApplyResult); r.Err != nil || r.Deleted != 1 {
		t.Fatalf("result after recovery %+v, want 1 deleted", r)
	}
	if _, err := db.GetMemory(1, "u", "A"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("A after the delete: %v", err)
	}
	if err := db.WriteHealth(); err != nil {
		t.Fatalf("still read-only after the apply succeeded: %v", err)
	}
	if w := logs.count("WARN cannot write the shard's state"); w != 1 {
		t.Fatalf("%d warnings for one episode of %d failed reads, want 1", w, counter.Load())
	}
	if f.Halted() {
		t.Fatal("a disk error halted the replica")
	}
}

// Stop ends an apply that waits for the disk without applying anything; the FSM then refuses further entries
// and snapshots (raft counts the stopped entries as applied), and a new FSM replays them after the restart.
func TestStopEndsWaitForDisk(t *testing.T) {
	counter := &errorfs.Counter{Injector: failOps(errorfs.OpIsRead, "*.sst", syscall.EIO)}
	tog := &errorfs.Toggle{Injector: counter}
	db := faultyDB(t, tog, quietLog())
	defer db.Close()
	f, _ := NewShardFSM(db, 1, nil, quietLog(), nil)
	applyOK(t, f, []*raft.Log{putLog(t, 1, mem("u", "A", "a"))})
	if err := db.Pebble().Flush(); err != nil {
		t.Fatal(err)
	}
	tog.On()
	entry := delLog(t, 2, "u", "A")
	done := applyAsync(f, entry)
	waitFor(t, "a failed attempt", func() bool { return counter.Load() >= 1 })
	f.Stop()
	if r := (<-done)[0].(ApplyResult); !errors.Is(r.Err, ErrStopped) {
		t.Fatalf("result after Stop: %+v, want ErrStopped", r)
	}
	if r := f.ApplyBatch([]*raft.Log{putLog(t, 3, mem("u", "C", "c"))})[0].(ApplyResult); !errors.Is(r.Err, ErrStopped) {
		t.Fatalf("entry after a stopped one: %+v, want ErrStopped (applying it would skip entry 2)", r)
	}
	if _, err := f.Snapshot(); !errors.Is(err, ErrStopped) {
		t.Fatalf("snapshot of a stopped FSM: %v, want ErrStopped (raft would compact away entry 2)", err)
	}

	tog.Off()
	if i, _, _ := db.Applied(1); i != 1 {
		t.Fatalf("stored applied index %d, want 1", i)
	}
	g, _ := NewShardFSM(db, 1, nil, quietLog(), nil)
	applyOK(t, g, []*raft.Log{entry})
	if _, err := db.GetMemory(1, "u", "A"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("replayed delete not applied: %v", err)
	}
}

func TestWriteHealthWatermark(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("db", Options{FS: fs, Logger: quietLog(), MinFreeBytes: 1 << 30, DiskCheckInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.WriteHealth(); err != nil {
		t.Fatalf("a filesystem without usage figures must pass: %v", err)
	}
	fs.TestingSetDiskUsage(vfs.DiskUsage{AvailBytes: 300 << 20, TotalBytes: 100 << 30, UsedBytes: 99 << 30})
	err = db.WriteHealth()
	if !errors.Is(err, ErrReadOnly) {
		t.Fatalf("WriteHealth with 300 MiB free = %v, want ErrReadOnly", err)
	}
	const want = "node is read-only: disk full: 300.0 MiB free of 100.0 GiB, below the 1.0 GiB watermark"
	if err.Error() != want {
		t.Fatalf("message %q, want %q", err, want)
	}
	// A read-only node must not fill the disk with a snapshot either: restore gives up, marker left.
	f, _ := NewShardFSM(db, 1, nil, quietLog(), nil)
	if err := f.Restore(io.NopCloser(bytes.NewReader(smallSnapshot(t)))); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("restore on a full disk: %v, want ErrReadOnly", err)
	}
	if r, _ := db.Restoring(1); !r {
		t.Fatal("an abandoned restore must leave its marker")
	}
	fs.TestingSetDiskUsage(vfs.DiskUsage{AvailBytes: 5 << 30, TotalBytes: 100 << 30, UsedBytes: 95 << 30})
	if err := db.WriteHealth(); err != nil {
		t.Fatalf("WriteHealth with 5 GiB free = %v", err)
	}
}

func smallSnapshot(t *testing.T) []byte {
	t.Helper()
	db := openCrashDB(t, vfs.NewMem())
	defer db.Close()
	f, _ := NewShardFSM(db, 1, nil, quietLog(), nil)
	applyOK(t, f, []*raft.Log{putLog(t, 1, mem("u", "A", "a"))})
	return persisted(t, f).Bytes()
}

// A background failure makes the node read-only until a flush or compaction succeeds, or until it has not
// recurred for bgErrorTTL (a compaction that failed once may never run again to clear it).
func TestBackgroundErrorEndsReadOnly(t *testing.T) {
	db := openCrashDB(t, vfs.NewMem())
	defer db.Close()
	enospc := &os.PathError{Op: "write", Path: "000042.sst", Err: syscall.ENOSPC}
	db.health.backgroundError(enospc)
	if err := db.WriteHealth(); !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "disk full: write 000042.sst") {
		t.Fatalf("after a failed flush: %v", err)
	}
	if err := db.health.check(time.Now().Add(bgErrorTTL)); err != nil {
		t.Fatalf("a failure that did not recur for %v still makes the node read-only: %v", bgErrorTTL, err)
	}
	db.health.backgroundOK()
	if err := db.WriteHealth(); err != nil {
		t.Fatalf("after a successful flush: %v", err)
	}
}
