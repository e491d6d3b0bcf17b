package retrieval

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/memcluster/memcluster/fulltext"
	"github.com/memcluster/memcluster/internal/mainthread"
	"github.com/memcluster/memcluster/internal/threadprio"
	"github.com/memcluster/memcluster/internal/threadprio/priotest"
	"golang.org/x/sys/unix"
)

// niceText records the nice value of the thread each batch is built on.
type niceText struct {
	*fulltext.Index
	seen chan int
}

func (n *niceText) ApplyWithMarkers(put []fulltext.Doc, del []string, m map[string][]byte) error {
	nice, err := threadprio.Nice()
	if err != nil {
		return err
	}
	n.seen <- nice
	return n.Index.ApplyWithMarkers(put, del, m)
}

// A batch built in a turn runs BuildNicer steps below the process; one a reader waits for, or one far behind, at
// the process's priority; and the lowered thread does not go back to running other goroutines.
func TestTurnsBuildAtALowerPriority(t *testing.T) {
	// This thread's nice value, the process's: no batch is built on a thread that stays (TestABatchLeavesTheMainThreadAlone).
	base := priotest.UnloweredNice(t)
	gate := NewIndexers(1)
	text := &niceText{Index: memText(t), seen: make(chan int, 4)}
	f := newTextFeeder(text, 0, gate, func(err error) { t.Error(err) })
	t.Cleanup(func() { f.close() })
	seen := func() int {
		t.Helper()
		select {
		case n := <-text.seen:
			return n
		case <-time.After(10 * time.Second):
			t.Fatal("no batch built")
			return 0
		}
	}
	doc := func(id string) []fulltext.Doc {
		return []fulltext.Doc{{ID: id, UserID: "u", Type: "episodic", Text: "bees"}}
	}

	f.add(1, doc("a"), nil)
	f.hurry() // end the linger: the batch takes a turn
	if n, want := seen(), min(base+BuildNicer, 19); n != want {
		t.Fatalf("a batch built in a turn ran at nice %d, want %d", n, want)
	}
	if st := gate.Stats(); !st.Lowered || st.Nice != min(base+BuildNicer, 19) {
		t.Fatalf("stats after a turn: %+v", st)
	}

	f.add(2, doc("b"), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.waitIndexed(ctx, 2); err != nil { // a reader waits: no turn
		t.Fatal(err)
	}
	if n := seen(); n != base {
		t.Fatalf("a batch a reader waited for ran at nice %d, want the process's %d", n, base)
	}

	// A batch of more changes than the Indexers' bound is built in its turn, at the process's priority.
	gate.behind = 1
	f.add(3, append(doc("c"), doc("d")...), nil)
	f.hurry()
	if n := seen(); n != base {
		t.Fatalf("a batch far behind ran at nice %d, want the process's %d", n, base)
	}
	if st := gate.Stats(); st.Lowered || st.Nice != base {
		t.Fatalf("stats after a batch far behind: %+v", st)
	}

	// Goroutines started now run on threads at the process's priority: the lowered one ended with its batch.
	for i := range 50 {
		got := make(chan int)
		go func() {
			n, _ := threadprio.Nice()
			got <- n
		}()
		if n := <-got; n != base {
			t.Fatalf("goroutine %d ran at nice %d after the batch, want %d", i, n, base)
		}
	}
}

// A batch that would be built on the main thread gets a thread of its own instead: lowered, the main thread would
// show the whole process at the lower priority (its id is the process's), and Go never ends it.
func TestABatchLeavesTheMainThreadAlone(t *testing.T) {
	base := priotest.UnloweredNice(t)
	var tid, nice int
	built := make(chan error, 1)
	gate := NewIndexers(1)
	mainthread.Do(func() {
		if unix.Gettid() != os.Getpid() {
			built <- fmt.Errorf("mainthread.Do ran on thread %d, not the main thread", unix.Gettid())
			return
		}
		built <- gate.buildLowered(func() error {
			tid = unix.Gettid()
			nice, _ = threadprio.Nice()
			return nil
		})
	})
	if err := <-built; err != nil {
		t.Fatal(err)
	}
	if tid == os.Getpid() {
		t.Fatal("the batch was built on the main thread")
	}
	if want := min(base+BuildNicer, 19); nice != want || !gate.Stats().Lowered {
		t.Fatalf("the batch ran at nice %d (stats %+v), want %d", nice, gate.Stats(), want)
	}
	var mainNice int
	mainthread.Do(func() { mainNice, _ = threadprio.Nice() })
	if mainNice != base {
		t.Fatalf("the main thread is at nice %d after the batch, want the process's %d", mainNice, base)
	}
}

func TestMain(m *testing.M) { mainthread.Main(m) }
