package storage

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/memory"
)

type recIndexer struct {
	puts, dels int
	resets     int
}

func (r *recIndexer) Index(_ uint64, p []memory.Memory, d []Ref) { r.puts += len(p); r.dels += len(d) }
func (r *recIndexer) Reset()                                     { r.resets++ }

func openMem(t *testing.T, fs vfs.FS) *DB {
	t.Helper()
	db, err := Open("db", Options{FS: fs, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func mem(user, id, text string) memory.Memory {
	return memory.Memory{ID: id, UserID: user, Type: memory.Episodic, Text: text,
		OccurredAt: time.Unix(1700000000, 0).UTC(), CreatedAt: time.Unix(1700000001, 0).UTC(),
		Embedding: []float32{0.6, 0.8}, EmbedModel: "test"}
}

func putLog(t *testing.T, index uint64, ms ...memory.Memory) *raft.Log {
	t.Helper()
	b, err := EncodePut(ms)
	if err != nil {
		t.Fatal(err)
	}
	return &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: b}
}

func delLog(t *testing.T, index uint64, user string, ids ...string) *raft.Log {
	t.Helper()
	b, err := EncodeDelete(DeletePayload{UserID: user, IDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	return &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: b}
}

func TestApplyPutDeleteAndReplay(t *testing.T) {
	fs := vfs.NewMem()
	db := openMem(t, fs)
	idx := &recIndexer{}
	f, err := NewShardFSM(db, 3, idx, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	res := f.ApplyBatch([]*raft.Log{
		putLog(t, 1, mem("u1", "A", "alpha"), mem("u1", "B", "beta")),
		delLog(t, 2, "u1", "A", "missing"),
	})
	if got := res[1].(ApplyResult).Deleted; got != 1 {
		t.Fatalf("deleted = %d, want 1 (a put then delete in one batch must see the put)", got)
	}
	if _, err := db.GetMemory(3, "u1", "A"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("A should be gone, got %v", err)
	}
	m, err := db.GetMemory(3, "u1", "B")
	if err != nil || m.Text != "beta" || len(m.Embedding) != 2 || m.Embedding[1] != 0.8 {
		t.Fatalf("B = %+v, %v", m, err)
	}
	// Replay of already-applied entries (raft re-delivers after a restart) must change nothing.
	f.ApplyBatch([]*raft.Log{putLog(t, 1, mem("u1", "A", "alpha"))})
	if _, err := db.GetMemory(3, "u1", "A"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatal("replayed entry 1 was applied twice")
	}
	if idx.puts != 2 || idx.dels != 1 {
		t.Fatalf("indexer saw puts=%d dels=%d", idx.puts, idx.dels)
	}
	// Another shard's keyspace is untouched, and the applied index survives reopen.
	if _, err := db.GetMemory(4, "u1", "B"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatal("shard 4 sees shard 3's memory")
	}
	db.Close()
	db = openMem(t, fs)
	defer db.Close()
	if i, _, _ := db.Applied(3); i != 2 {
		t.Fatalf("applied after reopen = %d, want 2", i)
	}
}

func TestUnknownCommandHaltsReplica(t *testing.T) {
	db := openMem(t, vfs.NewMem())
	defer db.Close()
	var halted error
	f, _ := NewShardFSM(db, 1, nil, slog.New(slog.DiscardHandler), func(err error) { halted = err })
	res := f.ApplyBatch([]*raft.Log{
		putLog(t, 1, mem("u", "A", "a")),
		{Index: 2, Term: 1, Type: raft.LogCommand, Data: []byte{commandVersion, 99}},
		putLog(t, 3, mem("u", "C", "c")),
	})
	if halted == nil || !f.Halted() {
		t.Fatal("replica did not halt on an unknown command")
	}
	if res[2].(ApplyResult).Err != ErrHalted {
		t.Fatalf("entry after the bad one: %+v", res[2])
	}
	if i, _, _ := db.Applied(1); i != 1 {
		t.Fatalf("applied = %d, want 1 (stop before the bad entry)", i)
	}
	if _, err := db.GetMemory(1, "u", "C"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatal("an entry after the undecodable one was applied")
	}
	if _, err := f.Snapshot(); !errors.Is(err, ErrHalted) {
		t.Fatal("a halted replica must not snapshot (raft would compact past the bad entry)")
	}
}

type bufSink struct{ bytes.Buffer }

func (b *bufSink) ID() string    { return "t" }
func (b *bufSink) Cancel() error { return nil }
func (b *bufSink) Close() error  { return nil }

func TestSnapshotRestoreRoundTrip(t *testing.T) {
	db := openMem(t, vfs.NewMem())
	defer db.Close()
	src, _ := NewShardFSM(db, 1, nil, slog.New(slog.DiscardHandler), nil)
	var ms []memory.Memory
	for _, id := range []string{"01A", "01B", "01C"} {
		ms = append(ms, mem("user-"+id, id, "text "+id))
	}
	src.ApplyBatch([]*raft.Log{putLog(t, 7, ms...)})
	sink := persisted(t, src)

	idx := &recIndexer{}
	dst, _ := NewShardFSM(db, 2, idx, slog.New(slog.DiscardHandler), nil)
	dst.ApplyBatch([]*raft.Log{putLog(t, 1, mem("stale", "OLD", "gone after restore"))})
	if err := dst.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	if dst.AppliedIndex() != 7 || idx.resets != 1 {
		t.Fatalf("applied=%d resets=%d", dst.AppliedIndex(), idx.resets)
	}
	n := 0
	_ = db.ScanShard(2, func(m memory.Memory) bool { n++; return true })
	if n != 3 {
		t.Fatalf("restored %d records, want 3", n)
	}
	if r, _ := db.Restoring(2); r {
		t.Fatal("restore marker left behind")
	}
	// A truncated stream is an error, never a silent partial state.
	if err := dst.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()[:sink.Len()/2]))); err == nil {
		t.Fatal("truncated snapshot restored without error")
	}
	if r, _ := db.Restoring(2); !r {
		t.Fatal("failed restore must leave its marker for the next start")
	}
}

// persisted is a snapshot of f, as raft would write it.
func persisted(t *testing.T, f *ShardFSM) *bufSink {
	t.Helper()
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	var sink bufSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	return &sink
}

func TestKeyRoundTrip(t *testing.T) {
	k := MemoryKey(9, "user\xffwith odd bytes", "01HXYZ")
	s, u, id, err := DecodeMemoryKey(k)
	if err != nil || s != 9 || u != "user\xffwith odd bytes" || id != "01HXYZ" {
		t.Fatalf("%d %q %q %v", s, u, id, err)
	}
	lo, hi := UserRange(9, "ab")
	if k2 := MemoryKey(9, "abc", "X"); bytes.Compare(k2, lo) >= 0 && bytes.Compare(k2, hi) < 0 {
		t.Fatal("user ab's range contains user abc's key")
	}
}

func TestSetEmbeddingsSkipsDeletedMemories(t *testing.T) {
	db := openMem(t, vfs.NewMem())
	defer db.Close()
	f, _ := NewShardFSM(db, 1, nil, slog.New(slog.DiscardHandler), nil)
	set, err := EncodeSetEmbeddings(SetEmbeddingsPayload{Items: []EmbeddingUpdate{
		{UserID: "u", ID: "A", Model: "m2", Vector: []float32{1, 0}},
		{UserID: "u", ID: "GONE", Model: "m2", Vector: []float32{1, 0}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	f.ApplyBatch([]*raft.Log{putLog(t, 1, mem("u", "A", "a")), {Index: 2, Term: 1, Type: raft.LogCommand, Data: set}})
	m, err := db.GetMemory(1, "u", "A")
	if err != nil || m.EmbedModel != "m2" || m.Embedding[0] != 1 || m.Text != "a" {
		t.Fatalf("A = %+v, %v", m, err)
	}
	if _, err := db.GetMemory(1, "u", "GONE"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatal("an embedding update resurrected a missing memory")
	}
}

func rawEntries(cmds ...[]byte) []*raft.Log {
	out := make([]*raft.Log, len(cmds))
	for i, c := range cmds {
		out[i] = &raft.Log{Index: uint64(i + 1), Term: 1, Type: raft.LogCommand, Data: c}
	}
	return out
}

// A delete retried with the same request id (the proposer lost the first answer in a leader change) reports
// what the first application did, on every replica and across snapshots.
func TestRetriedDeleteAnswersLikeTheFirst(t *testing.T) {
	db := openMem(t, vfs.NewMem())
	defer db.Close()
	f, _ := NewShardFSM(db, 1, nil, slog.New(slog.DiscardHandler), nil)
	del, _ := EncodeDelete(DeletePayload{UserID: "u", IDs: []string{"A"}, RequestID: "req-1"})
	res := f.ApplyBatch([]*raft.Log{putLog(t, 1, mem("u", "A", "a")),
		{Index: 2, Term: 1, Type: raft.LogCommand, Data: del},
		{Index: 3, Term: 2, Type: raft.LogCommand, Data: del}})
	if res[1].(ApplyResult).Deleted != 1 || res[2].(ApplyResult).Deleted != 1 {
		t.Fatalf("first %+v, retry %+v: both must report the deletion", res[1], res[2])
	}
	other, _ := EncodeDelete(DeletePayload{UserID: "u", IDs: []string{"A"}, RequestID: "req-2"})
	if r := f.ApplyBatch([]*raft.Log{{Index: 4, Term: 2, Type: raft.LogCommand, Data: other}}); r[0].(ApplyResult).Deleted != 0 {
		t.Fatal("a different request deleting a gone memory must report nothing deleted")
	}
	// The recorded result travels with snapshots.
	snap, _ := f.Snapshot()
	var sink bufSink
	_ = snap.Persist(&sink)
	snap.Release()
	g, _ := NewShardFSM(db, 2, nil, slog.New(slog.DiscardHandler), nil)
	if err := g.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	if r := g.ApplyBatch([]*raft.Log{{Index: 5, Term: 2, Type: raft.LogCommand, Data: del}}); r[0].(ApplyResult).Deleted != 1 {
		t.Fatal("after a snapshot install the retried delete answered differently")
	}
}
