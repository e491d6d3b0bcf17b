package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/shardmap"
)

// uncached reads a record from Pebble, past the record cache.
func uncached(db *DB, shard uint32, user, id string) (memory.Memory, error) {
	v, err := db.get(MemoryKey(shard, user, id))
	if err != nil || v == nil {
		return memory.Memory{}, errors.Join(err, memory.ErrNotFound)
	}
	return DecodeMemory(v)
}

type recordRef struct {
	shard    uint32
	user, id string
}

// agree reads every ref twice through the cache (the second read is a hit when the first added it) and fails
// unless both agree with Pebble.
func agree(t *testing.T, db *DB, step string, refs []recordRef) {
	t.Helper()
	for _, r := range refs {
		want, werr := uncached(db, r.shard, r.user, r.id)
		for range 2 {
			got, err := db.GetMemory(r.shard, r.user, r.id)
			if errors.Is(werr, memory.ErrNotFound) != errors.Is(err, memory.ErrNotFound) || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: shard %d %s/%s: cache %+v (%v), Pebble %+v (%v)", step, r.shard, r.user, r.id, got, err, want, werr)
			}
		}
	}
}

func cmdLog(t *testing.T, index uint64, data []byte, err error) *raft.Log {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: data}
}

// Every way a record changes — put over it, new embeddings, a user's transaction, a delete, a user's deletion, a
// split moving it, a snapshot restored over the shard, the shard dropped — is seen by the next GetMemory, whose
// record the cache held from the read before.
func TestRecordCacheFollowsEveryWrite(t *testing.T) {
	db := openMem(t, vfs.NewMem())
	defer db.Close()
	const shard, child, buckets = 1, 4, 4
	f, err := NewShardFSM(db, shard, nil, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, give, _ := shardmap.Whole(shard).Split()
	var users []string // two of the kept range, one of the given
	for i := 0; len(users) < 3; i++ {
		u := fmt.Sprintf("user-%03d", i)
		if loc := shardmap.Locate(u, buckets); loc.Bucket == shard && give.Contains(loc) == (len(users) == 2) {
			users = append(users, u)
		}
	}
	u1, u2, moved := users[0], users[1], users[2]
	var refs []recordRef
	for _, u := range users {
		for _, id := range []string{"A", "B", "C"} {
			refs = append(refs, recordRef{shard, u, id}, recordRef{child, u, id})
		}
	}
	var index uint64
	apply := func(step string, data []byte) {
		t.Helper()
		agree(t, db, "before "+step, refs)
		index++
		if r := f.ApplyBatch([]*raft.Log{cmdLog(t, index, data, nil)})[0].(ApplyResult); r.Err != nil {
			t.Fatalf("%s: %v", step, r.Err)
		}
		agree(t, db, step, refs)
	}
	var puts []memory.Memory
	for _, u := range users {
		puts = append(puts, mem(u, "A", "a of "+u), mem(u, "B", "b of "+u), mem(u, "C", "c of "+u))
	}
	apply("put", must(t)(EncodePut(puts)))
	apply("put over", must(t)(EncodePut([]memory.Memory{mem(u1, "A", "a again")})))
	apply("embeddings", must(t)(EncodeSetEmbeddings(SetEmbeddingsPayload{Items: []EmbeddingUpdate{
		{UserID: u1, ID: "B", Model: "m2", Vector: []float32{1, 0}}}})))
	apply("transaction", must(t)(EncodeUserTxn(UserTxnPayload{UserID: u1, Deletes: []string{"C"},
		Puts: []memory.Memory{mem(u1, "B", "b in a transaction")}})))
	apply("update", must(t)(EncodeUpdate(UserTxnPayload{UserID: u2, ExpectRev: 0,
		Puts: []memory.Memory{mem(u2, "A", "a updated")}})))
	apply("delete", must(t)(EncodeDelete(DeletePayload{UserID: u2, IDs: []string{"B"}})))
	apply("delete user", must(t)(EncodeDeleteUser(DeleteUserPayload{UserID: u2})))
	keep, give, _ := shardmap.Whole(shard).Split()
	apply("split", must(t)(EncodeSplit(SplitPayload{Child: child, Buckets: buckets, Keep: keep, Give: give,
		Voters: []string{"n1"}})))
	if _, err := db.GetMemory(child, moved, "A"); err != nil {
		t.Fatalf("the split did not move %s's records: %v", moved, err)
	}

	// A snapshot of another shard restored over this one.
	src, _ := NewShardFSM(db, 9, nil, slog.New(slog.DiscardHandler), nil)
	src.ApplyBatch([]*raft.Log{putLog(t, 50, mem(u1, "A", "restored a"), mem(u2, "C", "restored c"))})
	sink := persisted(t, src)
	agree(t, db, "before restore", refs)
	if err := f.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	agree(t, db, "restore", refs)
	if m, err := db.GetMemory(shard, u1, "A"); err != nil || m.Text != "restored a" {
		t.Fatalf("after restore: %+v, %v", m, err)
	}
	if err := db.DropShard(child); err != nil {
		t.Fatal(err)
	}
	agree(t, db, "drop", refs)
	if s := db.RecordCacheStats(); s.Hits == 0 || s.Misses == 0 {
		t.Fatalf("cache stats %+v: the reads never hit, or never missed", s)
	}
}

// must unwraps an encoding.
func must(t *testing.T) func([]byte, error) []byte {
	return func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

// Readers racing a writer never see a record older than one a read before them returned, and once the writer
// stops every read answers its last write.
func TestRecordCacheNeverGoesBack(t *testing.T) {
	db := openMem(t, vfs.NewMem())
	defer db.Close()
	f, err := NewShardFSM(db, 1, nil, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	const writes = 2000
	f.ApplyBatch([]*raft.Log{putLog(t, 1, mem("u", "X", fmt.Sprint(0)))})
	var done atomic.Bool
	var wg sync.WaitGroup
	var seen atomic.Int64 // the newest version any read has returned
	for range 3 {
		wg.Go(func() {
			for !done.Load() {
				floor := seen.Load()
				m, err := db.GetMemory(1, "u", "X")
				if err != nil {
					t.Error(err)
					return
				}
				var v int64
				fmt.Sscan(m.Text, &v)
				if v < floor {
					t.Errorf("read version %d after a read had returned %d", v, floor)
					return
				}
				for cur := seen.Load(); v > cur && !seen.CompareAndSwap(cur, v); cur = seen.Load() {
				}
			}
		})
	}
	for i := 1; i <= writes; i++ {
		f.ApplyBatch([]*raft.Log{putLog(t, uint64(i+1), mem("u", "X", fmt.Sprint(i)))})
	}
	done.Store(true)
	wg.Wait()
	if m, err := db.GetMemory(1, "u", "X"); err != nil || m.Text != fmt.Sprint(writes) {
		t.Fatalf("after the writes: %q, %v", m.Text, err)
	}
}

// The cache stays within its size, and off means every read goes to Pebble.
func TestRecordCacheBounded(t *testing.T) {
	db, err := Open("db", Options{FS: vfs.NewMem(), Logger: slog.New(slog.DiscardHandler), RecordCacheSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f, _ := NewShardFSM(db, 1, nil, slog.New(slog.DiscardHandler), nil)
	var ms []memory.Memory
	for i := range 1000 {
		ms = append(ms, mem("u", fmt.Sprintf("M%04d", i), fmt.Sprintf("memory %d with some words", i)))
	}
	f.ApplyBatch([]*raft.Log{putLog(t, 1, ms...)})
	for _, m := range ms {
		if _, err := db.GetMemory(1, "u", m.ID); err != nil {
			t.Fatal(err)
		}
	}
	// Two readers that missed the same record both add it: the second replaces the first.
	k := MemoryKey(1, "u", "M0001")
	_, gen, _ := db.records.get(k)
	db.records.add(k, []byte("first"), gen)
	db.records.add(k, []byte("second"), gen)
	var total int64
	for i := range db.records.parts {
		p := &db.records.parts[i]
		var counted int64
		for ek, ev := range p.m {
			counted += int64(len(ek) + len(ev) + recordEntryOverhead)
		}
		if counted != p.bytes {
			t.Fatalf("part %d counts %d bytes, holds %d", i, p.bytes, counted)
		}
		total += p.bytes
	}
	if total > 64<<10 || total < 32<<10 {
		t.Fatalf("cache holds %d bytes, want at most its 64 KiB and most of it used", total)
	}

	off, err := Open("db2", Options{FS: vfs.NewMem(), Logger: slog.New(slog.DiscardHandler), RecordCacheSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	if off.records != nil {
		t.Fatal("RecordCacheSize -1 left a cache")
	}
}
