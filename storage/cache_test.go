package storage

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// A record read twice from a table is read from the block cache the second time, beside a full-size memtable
// (Pebble reserves memtables' memory from the block cache), and every table carries a Bloom filter.
func TestReadsHitTheBlockCacheAndFilters(t *testing.T) {
	// A memtable as large as the blocks' share of the cache: without room for both, no block stays cached.
	db, err := Open("db", Options{FS: vfs.NewMem(), CacheSize: 1 << 20, MemTableSize: 1 << 20, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p := db.Pebble()
	for i := range 1000 {
		if err := p.Set(fmt.Appendf(nil, "k%05d", i), make([]byte, 512), pebble.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	// Each flush doubles the next memtable's size up to MemTableSize: after a few, the mutable memtable reserves
	// its full size from the cache, as on a node that has taken writes for a while.
	for i := range 10 {
		if err := p.Set(fmt.Appendf(nil, "f%02d", i), nil, pebble.NoSync); err != nil {
			t.Fatal(err)
		}
		if err := p.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Compact(context.Background(), []byte("a"), []byte("z"), false); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := db.get([]byte("k00500")); err != nil {
			t.Fatal(err)
		}
	}
	m := p.Metrics()
	if m.BlockCache.Hits == 0 || m.BlockCache.Count == 0 {
		t.Errorf("block cache %+v: the second read of a block must hit it", m.BlockCache)
	}
	levels, err := p.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	for l, tables := range levels {
		for _, tb := range tables {
			if name := tb.Properties.FilterPolicyName; name != bloom.FilterPolicy(10).Name() {
				t.Errorf("table %s in L%d has filter %q, want a Bloom filter", tb.FileNum, l, name)
			}
		}
	}
}

// HeapBytes counts the memtables and cached blocks a build without cgo holds on the Go heap (none with cgo), and
// answers 0 once the DB is closed, however late it is asked.
func TestHeapBytesCountsPebblesBuffers(t *testing.T) {
	db, err := Open("db", Options{FS: vfs.NewMem(), CacheSize: 1 << 20, MemTableSize: 1 << 20, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	p := db.Pebble()
	for i := range 100 {
		if err := p.Set(fmt.Appendf(nil, "k%05d", i), make([]byte, 512), pebble.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if _, err := db.get(fmt.Appendf(nil, "k%05d", i)); err != nil {
			t.Fatal(err)
		}
	}
	switch got := db.HeapBytes(); {
	case pebbleOnGoHeap && got < 64<<10:
		t.Fatalf("HeapBytes %d: a memtable and the blocks just read are on the Go heap", got)
	case !pebbleOnGoHeap && got != 0:
		t.Fatalf("HeapBytes %d with cgo: Pebble's buffers are off the Go heap", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := db.HeapBytes(); got != 0 {
		t.Fatalf("HeapBytes %d after Close", got)
	}
}
