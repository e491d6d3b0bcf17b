package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Open refuses a compression it does not know, naming it, before touching the directory.
func TestOpenRefusesUnknownCompression(t *testing.T) {
	fs := vfs.NewMem()
	_, err := Open("db", Options{FS: fs, Compression: "lz4", Logger: slog.New(slog.DiscardHandler)})
	if !errors.Is(err, ErrCompression) || !bytes.Contains([]byte(err.Error()), []byte(`"lz4"`)) {
		t.Fatalf("Open with lz4: %v, want ErrCompression naming it", err)
	}
	if names, _ := fs.List(""); len(names) != 0 {
		t.Fatalf("a refused Open left %v behind", names)
	}
}

// The setting reaches the tables a flush writes (compressible values take a fraction of their size only with
// snappy), and tables written under one setting read back under the other.
func TestCompressionReachesTablesAndSwitches(t *testing.T) {
	fs := vfs.NewMem()
	value := bytes.Repeat([]byte("memory "), 100)
	flushed := map[string]uint64{}
	for round, name := range []string{"none", "snappy", "none"} {
		db, err := Open("db", Options{FS: fs, Compression: name, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		p := db.Pebble()
		for i := range 200 {
			if err := p.Set(fmt.Appendf(nil, "k%d-%05d", round, i), value, pebble.NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Flush(); err != nil {
			t.Fatal(err)
		}
		for r := range round + 1 { // what every earlier setting wrote
			v, closer, err := p.Get(fmt.Appendf(nil, "k%d-%05d", r, 199))
			if err != nil || !bytes.Equal(v, value) {
				t.Fatalf("%s: reading round %d's table: %v", name, r, err)
			}
			closer.Close()
		}
		if round < 2 {
			flushed[name] = db.DiskStats().FlushBytes
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if raw := uint64(200 * len(value)); flushed["none"] < raw || flushed["snappy"] > raw/4 {
		t.Fatalf("flushed %d bytes uncompressed and %d with snappy, for %d bytes of values", flushed["none"],
			flushed["snappy"], raw)
	}
}

// Under "last-level" a flush writes its table uncompressed, and the compaction that moves it into the last level
// compresses it.
func TestLastLevelCompressesOnlyTheLastLevel(t *testing.T) {
	db, err := Open("db", Options{FS: vfs.NewMem(), Logger: slog.New(slog.DiscardHandler)}) // the default
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p := db.Pebble()
	value := bytes.Repeat([]byte("memory "), 100)
	raw := uint64(200 * len(value))
	for range 2 { // two overlapping flushes, which the compaction must merge (one alone would just move)
		for i := range 200 {
			if err := p.Set(fmt.Appendf(nil, "k%05d", i), value, pebble.NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if s := db.DiskStats(); s.FlushBytes < 2*raw {
		t.Fatalf("the flushes wrote %d bytes for %d bytes of values: compressed above the last level", s.FlushBytes, 2*raw)
	}
	if err := p.Compact(context.Background(), []byte("k"), []byte("l"), true); err != nil {
		t.Fatal(err)
	}
	m := p.Metrics()
	if last := m.Levels[len(m.Levels)-1]; last.TablesCount == 0 || uint64(last.TablesSize) > raw/4 {
		t.Fatalf("the last level holds %d tables of %d bytes for %d bytes of values", last.TablesCount, last.TablesSize, raw)
	}
}
