package storage

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/memcluster/memcluster/internal/mainthread"
	"github.com/memcluster/memcluster/internal/threadprio"
	"github.com/memcluster/memcluster/internal/threadprio/priotest"
)

// The main thread stays with mainthread: no goroutine of these tests lands there, where threadprio refuses.
func TestMain(m *testing.M) { mainthread.Main(m) }

// The listener lowers the goroutine's own thread by the steps asked, and only that thread.
func TestCompactionListenerLowersItsThreadOnly(t *testing.T) {
	base, err := threadprio.Nice()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan int, 1)
	go func() {
		lowerCompactions(3, new(atomic.Int64), func() bool { return false })(pebble.CompactionInfo{})
		n, _ := threadprio.Nice()
		got <- n
	}()
	if n := <-got; n != min(base+3, 19) {
		t.Fatalf("nice on the compaction's thread: %d, want %d", n, min(base+3, 19))
	}
	if n, _ := threadprio.Nice(); n != base {
		t.Fatalf("the test's thread went from nice %d to %d", base, n)
	}
}

// A compaction that begins while level 0 is deep enough to hold writes (urgent) keeps the process's priority,
// and is not counted as lowered.
func TestUrgentCompactionsKeepTheirPriority(t *testing.T) {
	base := priotest.UnloweredNice(t) // at nice 19 a lowered thread would look unlowered too
	lowered := new(atomic.Int64)
	got := make(chan int, 1)
	go func() {
		runtime.LockOSThread() // the thread dies with the goroutine, whatever the listener did to it
		lowerCompactions(3, lowered, func() bool { return true })(pebble.CompactionInfo{})
		n, _ := threadprio.Nice()
		got <- n
	}()
	if n := <-got; n != base || lowered.Load() != 0 {
		t.Fatalf("an urgent compaction ran at nice %d (%d lowered), want %d", n, lowered.Load(), base)
	}
}

// Pebble calls CompactionBegin on the goroutine that runs the compaction, so the compaction runs on the lowered
// thread (seen from CompactionEnd, on the same goroutine), and the goroutine that asked for it keeps its
// priority.
func TestCompactionsRunOnTheLoweredThread(t *testing.T) {
	base, err := threadprio.Nice()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []int
	listener := &pebble.EventListener{
		CompactionBegin: lowerCompactions(5, new(atomic.Int64), func() bool { return false }),
		CompactionEnd: func(info pebble.CompactionInfo) {
			if !rewritesTables(info) {
				return
			}
			n, _ := threadprio.Nice()
			mu.Lock()
			seen = append(seen, n)
			mu.Unlock()
		},
	}
	db, err := pebble.Open("db", &pebble.Options{FS: vfs.NewMem(), MemTableSize: 1 << 20, EventListener: listener})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	overwriteAndCompact(t, db)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("no compaction rewrote tables")
	}
	for _, n := range seen {
		if n != min(base+5, 19) {
			t.Fatalf("compactions ran at nice %v, want all at %d", seen, min(base+5, 19))
		}
	}
	if n, _ := threadprio.Nice(); n != base {
		t.Fatalf("the caller's thread went from nice %d to %d", base, n)
	}
}

// Open installs the listener: a DB opened with CompactionNicer compacts, on lowered threads, and counts them.
func TestLoweredCompactionsCompact(t *testing.T) {
	db, err := Open("db", Options{FS: vfs.NewMem(), CompactionNicer: 5, MemTableSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	overwriteAndCompact(t, db.Pebble())
	if n := db.DiskStats().LoweredCompactions; n == 0 {
		t.Fatalf("no compaction counted as lowered (%d in all)", db.Pebble().Metrics().Compact.Count)
	}
}

// overwriteAndCompact writes the same 2,000 keys in three flushed rounds, so that compactions merge tables rather
// than move them, and compacts them all.
func overwriteAndCompact(t *testing.T, db *pebble.DB) {
	t.Helper()
	for round := range 3 {
		for i := range 2000 {
			if err := db.Set(fmt.Appendf(nil, "k%05d", i), make([]byte, 1024), pebble.NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Flush(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	if err := db.Compact(t.Context(), []byte("k"), []byte("l"), true); err != nil {
		t.Fatal(err)
	}
}
