package retrieval

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/memcluster/memcluster/fulltext"
	"github.com/memcluster/memcluster/internal/threadprio"
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
	// This thread's: the main thread can have run a lowered batch, and Go keeps a locked goroutine's main
	// thread (wedged, never to run another goroutine) where it ends any other.
	base, err := threadprio.Nice()
	if err != nil {
		t.Fatal(err)
	}
	if base >= 19 {
		// Nothing could be lowered: on CI that is a broken runner, not a reason to pass.
		if os.Getenv("CI") == "true" {
			t.Fatalf("the process runs at nice %d already: its threads cannot be lowered", base)
		}
		t.Skipf("the process runs at nice %d already", base)
	}
	gate := NewIndexers(1)
	text := &niceText{Index: memText(t), seen: make(chan int, 4)}
	f := newTextFeeder(text, 0, gate, func(err error) { t.Error(err) })
	t.Cleanup(f.close)
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
