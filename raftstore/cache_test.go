package raftstore

import (
	"bytes"
	"testing"

	"github.com/hashicorp/raft"
)

// countingStore counts the reads that reach the store behind the cache.
type countingStore struct {
	*raft.InmemStore
	reads int
}

func (s *countingStore) GetLog(idx uint64, log *raft.Log) error {
	s.reads++
	return s.InmemStore.GetLog(idx, log)
}

func TestLogCacheKeepsWithinItsBudget(t *testing.T) {
	store := &countingStore{InmemStore: raft.NewInmemStore()}
	c := NewCache(store, 8, 1000)
	entry := func(i uint64, size int) *raft.Log {
		return &raft.Log{Index: i, Term: 1, Data: bytes.Repeat([]byte{byte(i)}, size)}
	}
	read := func(i uint64) (cached bool) {
		t.Helper()
		before := store.reads
		var l raft.Log
		if err := c.GetLog(i, &l); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if l.Index != i || len(l.Data) == 0 || l.Data[0] != byte(i) {
			t.Fatalf("entry %d: read %d with %d bytes", i, l.Index, len(l.Data))
		}
		return store.reads == before
	}
	// Ten small entries: the count bounds the cache (8), as raft.LogCache's would.
	for i := uint64(1); i <= 10; i++ {
		if err := c.StoreLog(entry(i, 10)); err != nil {
			t.Fatal(err)
		}
	}
	if read(2) || !read(3) || !read(10) {
		t.Fatal("the eight latest small entries should be cached, and no older one")
	}
	// Three of 400 bytes: the budget (1,000) keeps the last two, and every small entry left to make room.
	if err := c.StoreLogs([]*raft.Log{entry(11, 400), entry(12, 400), entry(13, 400)}); err != nil {
		t.Fatal(err)
	}
	if c.bytes > 1000 {
		t.Fatalf("cache holds %d bytes, budget 1000", c.bytes)
	}
	if read(11) || !read(12) || !read(13) || read(10) {
		t.Fatal("after three large entries, only the two latest should be cached")
	}
	// An entry larger than the budget is read from the store, and leaves the cache as it was.
	if err := c.StoreLog(entry(14, 2000)); err != nil {
		t.Fatal(err)
	}
	if read(14) || !read(13) {
		t.Fatal("an entry over the budget should not be cached, nor evict the others")
	}
	if err := c.DeleteRange(13, 14); err != nil {
		t.Fatal(err)
	}
	if c.bytes != 0 {
		t.Fatalf("cache holds %d bytes after a truncation", c.bytes)
	}
	if read(12) {
		t.Fatal("entry 12 cached after the cache was dropped")
	}
}
