package storage

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// DiskStats counts the WAL's bytes once (not again as flushed, as Pebble's Metrics.Total does) and the tables a
// flush and a compaction write, and keeps its values once the DB is closed (counters never go back).
func TestDiskStatsCountsEachWriteOnce(t *testing.T) {
	db, err := Open("db", Options{FS: vfs.NewMem(), MemTableSize: 1 << 20, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	p := db.Pebble()
	const n, size = 200, 512
	for range 2 { // two overlapping flushes, which the compaction must merge (one alone would just move)
		for i := range n {
			if err := p.Set(fmt.Appendf(nil, "k%05d", i), make([]byte, size), pebble.NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	s := db.DiskStats()
	if s.WALBytes < 2*n*size {
		t.Errorf("WAL bytes %d, want at least the %d written", s.WALBytes, 2*n*size)
	}
	if s.Flushes < 1 || s.FlushBytes == 0 || s.FlushBytes > s.WALBytes {
		t.Errorf("%d flushes wrote %d bytes of tables from a WAL of %d bytes", s.Flushes, s.FlushBytes, s.WALBytes)
	}
	if s.LiveBytes == 0 { // where the tables are depends on Pebble's own compactions meanwhile
		t.Errorf("after two flushes: %d live bytes", s.LiveBytes)
	}
	if err := p.Compact(context.Background(), []byte("k"), []byte("l"), true); err != nil {
		t.Fatal(err)
	}
	if c := db.DiskStats(); c.Compactions == 0 || c.CompactionBytes == 0 || c.L0Tables != 0 {
		t.Errorf("after a manual compaction: %d compactions wrote %d bytes, %d tables left in L0",
			c.Compactions, c.CompactionBytes, c.L0Tables)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if after := db.DiskStats(); after.WALBytes < s.WALBytes || after.CompactionBytes == 0 {
		t.Fatalf("DiskStats after Close went back: %+v, before %+v", after, s)
	}
}
