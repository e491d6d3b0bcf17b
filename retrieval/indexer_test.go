package retrieval

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/memcluster/memcluster/fulltext"
)

func memText(t testing.TB) *fulltext.Index {
	t.Helper()
	ix, err := fulltext.Open("", fulltext.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// Closing while updates keep arriving must not hang (it once did: a blocking kick into a full buffer after
// the feeder had already returned).
func TestFeederCloseUnderLoadDoesNotHang(t *testing.T) {
	for round := 0; round < 50; round++ {
		f := newTextFeeder(memText(t), 0, nil, func(err error) { t.Error(err) })
		var wg sync.WaitGroup
		stop := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Bounded: the point is closing while adds race it, not flushing an unbounded backlog under -race.
			for i := uint64(1); i <= 500; i++ {
				select {
				case <-stop:
					return
				default:
				}
				f.add(i, []fulltext.Doc{{ID: fmt.Sprintf("d%d-%d", round, i), UserID: "u", Type: "episodic", Text: "hello"}}, nil)
			}
		}()
		time.Sleep(time.Duration(round%5) * time.Millisecond)
		done := make(chan struct{})
		go func() { f.close(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: close hung", round)
		}
		close(stop)
		wg.Wait()
	}
}

// A reader waiting for an index is served as soon as the feeder has indexed it, without waiting out the linger.
func TestWaitIndexedFlushesAtOnce(t *testing.T) {
	text := memText(t)
	f := newTextFeeder(text, 0, nil, func(err error) { t.Error(err) })
	defer f.close()
	f.add(7, []fulltext.Doc{{ID: "a", UserID: "u", Type: "episodic", Text: "bees on the roof"}}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), feederLinger/2)
	defer cancel()
	if err := f.waitIndexed(ctx, 7); err != nil {
		t.Fatalf("wait for index 7: %v", err)
	}
	hits, err := text.Search(fulltext.Query{UserID: "u", Text: "bees", K: 5})
	if err != nil || len(hits) != 1 {
		t.Fatalf("after waitIndexed: %v %v", hits, err)
	}
	// An index with no changes (a config entry) is not waited for.
	if err := f.waitIndexed(ctx, 9); err != nil {
		t.Fatalf("wait for an index without changes: %v", err)
	}
}

// An id deleted and put again (a forgotten user imported with the same ids) ends indexed, and one put and then
// deleted ends deleted, however the changes fall into the feeder's batches.
func TestFeederLaterChangeWins(t *testing.T) {
	text := memText(t)
	f := newTextFeeder(text, 0, nil, func(err error) { t.Error(err) })
	defer f.close()
	doc := func(id string) []fulltext.Doc {
		return []fulltext.Doc{{ID: id, UserID: "u", Type: "episodic", Text: "a tram ride in Lisbon"}}
	}
	f.add(1, doc("back"), nil)
	f.add(2, nil, []string{"back"})
	f.add(3, doc("back"), nil)
	f.add(4, doc("gone"), nil)
	f.add(5, nil, []string{"gone"})
	if err := f.waitIndexed(context.Background(), 5); err != nil {
		t.Fatal(err)
	}
	hits, err := text.Search(fulltext.Query{UserID: "u", Text: "lisbon", K: 5})
	if err != nil || len(hits) != 1 || hits[0].ID != "back" {
		t.Fatalf("want only the re-put doc, got %v %v", hits, err)
	}
}
