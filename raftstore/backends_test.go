package raftstore

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
)

// logStableStore is what raft needs from a backend.
type logStableStore interface {
	raft.LogStore
	raft.StableStore
}

// backend opens one raft group's storage in dir, in the layout each would
// have in production. The conformance suite, the raft test and the
// benchmarks all run against every entry of backends().
type backend struct {
	name string
	// openGroups opens n groups whose state lives in dir (one DB for
	// Pebble, one dir/file per group for the others). close releases all.
	openGroups func(tb testing.TB, dir string, n int) (groups []logStableStore, close func())
}

func backends() []backend {
	return []backend{
		{name: "pebble", openGroups: openPebbleGroups},
		{name: "raft-wal", openGroups: openWALGroups},
		{name: "raft-boltdb", openGroups: openBoltGroups},
	}
}

func openOne(tb testing.TB, b backend, dir string) (logStableStore, func()) {
	tb.Helper()
	g, closeFn := b.openGroups(tb, dir, 1)
	return g[0], closeFn
}

// quietLogger keeps Pebble's info logs (flushes, compactions) out of test
// and benchmark output.
type quietLogger struct{ tb testing.TB }

func (quietLogger) Infof(string, ...any)                {}
func (l quietLogger) Errorf(format string, args ...any) { l.tb.Logf("pebble: "+format, args...) }
func (l quietLogger) Fatalf(format string, args ...any) { l.tb.Fatalf("pebble: "+format, args...) }

func openPebble(tb testing.TB, dir string) *pebble.DB {
	tb.Helper()
	db, err := pebble.Open(dir, &pebble.Options{Logger: quietLogger{tb}})
	if err != nil {
		tb.Fatalf("open pebble: %v", err)
	}
	return db
}

// groupPrefix mirrors the production layout: a version byte and a
// fixed-width shard id, which keeps prefixes prefix-free.
func groupPrefix(shard int) []byte {
	return []byte{'r', 1, 0, 0, byte(shard >> 8), byte(shard)}
}

func openPebbleGroups(tb testing.TB, dir string, n int) ([]logStableStore, func()) {
	tb.Helper()
	db := openPebble(tb, dir)
	groups := make([]logStableStore, n)
	for i := range groups {
		s, err := New(db, groupPrefix(i), DefaultOptions())
		if err != nil {
			tb.Fatalf("new store: %v", err)
		}
		groups[i] = s
	}
	return groups, func() {
		if err := db.Close(); err != nil {
			tb.Errorf("close pebble: %v", err)
		}
	}
}

func openWALGroups(tb testing.TB, dir string, n int) ([]logStableStore, func()) {
	tb.Helper()
	groups := make([]logStableStore, n)
	wals := make([]*wal.WAL, n)
	metas := make([]*metadb.BoltMetaDB, n)
	for i := range groups {
		gdir := filepath.Join(dir, fmt.Sprintf("group-%d", i))
		if err := os.MkdirAll(gdir, 0o755); err != nil {
			tb.Fatal(err)
		}
		// WAL.Close leaves its bolt meta store open (and flocked), so we
		// own the meta store and close it ourselves.
		metas[i] = &metadb.BoltMetaDB{}
		w, err := wal.Open(gdir, wal.WithMetaStore(metas[i]))
		if err != nil {
			tb.Fatalf("open raft-wal: %v", err)
		}
		groups[i], wals[i] = w, w
	}
	return groups, func() {
		for i, w := range wals {
			if err := w.Close(); err != nil {
				tb.Errorf("close raft-wal: %v", err)
			}
			if err := metas[i].Close(); err != nil {
				tb.Errorf("close raft-wal meta: %v", err)
			}
		}
	}
}

func openBoltGroups(tb testing.TB, dir string, n int) ([]logStableStore, func()) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	groups := make([]logStableStore, n)
	dbs := make([]*raftboltdb.BoltStore, n)
	for i := range groups {
		s, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, fmt.Sprintf("group-%d.db", i))})
		if err != nil {
			tb.Fatalf("open raft-boltdb: %v", err)
		}
		groups[i], dbs[i] = s, s
	}
	return groups, func() {
		for _, s := range dbs {
			if err := s.Close(); err != nil {
				tb.Errorf("close raft-boltdb: %v", err)
			}
		}
	}
}
