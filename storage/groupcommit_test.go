package storage

import (
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

func TestSyncPacerHoldsBackOnlySharedSyncs(t *testing.T) {
	const hold = time.Millisecond
	for _, tc := range []struct {
		name    string
		entries []uint64 // entries synced writes carried before each sync
		want    []bool   // whether the next sync is held back after each
	}{
		{"a lone writer", []uint64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, []bool{false, false, false, false, false, false, false, false, false, false}},
		{"no counted writers", []uint64{0, 0, 0}, []bool{false, false, false}},
		// The average starts at zero: 1, 1.88, 2.64, then 3.31 entries a sync.
		{"many writers", []uint64{8, 8, 8, 8, 8}, []bool{false, false, false, true, true}},
		// A few writers: two entries a sync, and now and then four (2.67 in the long run), never held.
		{"a few writers", []uint64{2, 2, 4, 2, 2, 4, 2, 2, 4, 2, 2, 4, 2, 2, 4, 2, 2, 4, 2, 2, 4, 2, 2, 4},
			[]bool{false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &syncPacer{interval: hold}
			for i, n := range tc.entries {
				p.entries.Add(n)
				got := p.next() == hold
				if got != tc.want[i] {
					t.Fatalf("sync %d (%d entries, average %.2f): held %v, want %v", i, n, p.avg, got, tc.want[i])
				}
			}
		})
	}
}

func TestSyncPacerOffNeverHolds(t *testing.T) {
	p := &syncPacer{}
	for range 10 {
		p.entries.Add(64)
		if d := p.next(); d != 0 {
			t.Fatalf("held %v with the group commit off", d)
		}
	}
	if p.syncs.Load() != 10 || p.held.Load() != 0 {
		t.Fatalf("counted %d syncs, %d held; want 10, 0", p.syncs.Load(), p.held.Load())
	}
}

// After a burst the average forgets it within a few dozen syncs (each held at most the interval), and a lone
// writer is then left alone again.
func TestSyncPacerLetsGoAfterABurst(t *testing.T) {
	p := &syncPacer{interval: time.Millisecond}
	for i := range 6 { // the average starts at zero: 2, then 3.75 entries a sync
		p.entries.Add(16)
		if held := p.next() != 0; held != (i >= 1) {
			t.Fatalf("sync %d covering 16 entries: held %v (average %.2f)", i, held, p.avg)
		}
	}
	released := -1
	for i := range 40 {
		p.entries.Add(1)
		held := p.next() != 0
		switch {
		case !held && released < 0:
			released = i
		case held && released >= 0:
			t.Fatalf("lone sync %d held again after the release at %d", i, released)
		}
	}
	if released < 0 || released > 24 {
		t.Fatalf("a lone writer was released after %d syncs, want within 24", released)
	}
}

// A writer alone, each of its synced writes waiting for its sync, is never held back by the group commit:
// with a 200 ms interval, twenty writes would take four seconds if it were.
func TestGroupCommitNeverHoldsALoneWriter(t *testing.T) {
	db, err := Open("db", Options{FS: vfs.NewMem(), CacheSize: 1 << 20, WALMinSyncInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	for i := range 20 {
		db.SyncedWrites().Add(1)
		if err := db.Pebble().Set(fmt.Appendf(nil, "k%d", i), []byte("v"), pebble.Sync); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("twenty lone synced writes took %v: the group commit held them back", took)
	}
	// The pacer saw every sync (Open's own synced write included) and held none.
	if st := db.DiskStats(); st.WALSyncs < 20 || st.WALSyncsHeld != 0 || st.SyncedEntries != 20 {
		t.Fatalf("stats %+v: want at least 20 syncs, none held, 20 entries", st)
	}
}

// Synced writes that each carry several entries (many writers' proposals) turn the hold on, and every one of
// them is still written. No timing is asserted: only that the pacer was asked and held.
func TestGroupCommitHoldsSharedSyncs(t *testing.T) {
	db, err := Open("db", Options{FS: vfs.NewMem(), CacheSize: 1 << 20, WALMinSyncInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 10 {
		db.SyncedWrites().Add(8)
		if err := db.Pebble().Set(fmt.Appendf(nil, "k%d", i), []byte("v"), pebble.Sync); err != nil {
			t.Fatal(err)
		}
	}
	if st := db.DiskStats(); st.WALSyncsHeld == 0 || st.SyncedEntries != 80 {
		t.Fatalf("stats %+v: want syncs held, 80 entries", st)
	}
	for i := range 10 {
		if _, closer, err := db.Pebble().Get(fmt.Appendf(nil, "k%d", i)); err != nil {
			t.Fatalf("k%d: %v", i, err)
		} else {
			closer.Close()
		}
	}
}
