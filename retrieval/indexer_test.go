package retrieval

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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

// Close indexes a backlog of up to closeFlushMax documents, and leaves a larger one, with the marker, to the
// next open (which re-feeds it from the raft log's tail): a node's shutdown under a bulk load must not index
// every follower's backlog first.
func TestFeederCloseLeavesALargeBacklog(t *testing.T) {
	docs := func(from, n int) []fulltext.Doc {
		out := make([]fulltext.Doc, n)
		for i := range out {
			out[i] = fulltext.Doc{ID: fmt.Sprintf("d%d", from+i), UserID: "u", Type: "episodic", Text: "a tram ride"}
		}
		return out
	}
	for _, c := range []struct {
		n          int
		wantLeft   int
		wantMarker uint64
	}{{closeFlushMax, 0, 2}, {closeFlushMax + 1, closeFlushMax + 1, 0}} {
		text := memText(t)
		f := newTextFeeder(text, 0, nil, func(err error) { t.Error(err) })
		f.add(1, docs(0, c.n/2), nil)
		f.add(2, docs(c.n/2, c.n-c.n/2), nil)
		if left := f.close(); left != c.wantLeft {
			t.Fatalf("%d pending: close left %d, want %d", c.n, left, c.wantLeft)
		}
		var marker uint64
		if b, err := text.Marker(markerApplied); err != nil {
			t.Fatal(err)
		} else if len(b) == 8 {
			marker = binary.BigEndian.Uint64(b)
		}
		n, err := text.DocCount()
		if err != nil {
			t.Fatal(err)
		}
		if marker != c.wantMarker || (c.wantLeft == 0 && n != uint64(c.n)) || (c.wantLeft > 0 && n != 0) {
			t.Fatalf("%d pending: marker %d with %d documents indexed, want marker %d", c.n, marker, n, c.wantMarker)
		}
	}
}

// A batch that close interrupts stops between chunks, without its marker.
func TestApplyChunkedStopsBetweenChunks(t *testing.T) {
	text := memText(t)
	puts := make([]fulltext.Doc, 2*feederChunk+1)
	for i := range puts {
		puts[i] = fulltext.Doc{ID: fmt.Sprintf("d%d", i), UserID: "u", Type: "episodic", Text: "bees"}
	}
	calls := 0
	left, err := applyChunked(text, puts, nil, 9, func() bool { calls++; return calls > 1 })
	if err != nil || left != feederChunk+1 {
		t.Fatalf("applyChunked: %d left, err %v; want stopped with %d left", left, err, feederChunk+1)
	}
	if n, _ := text.DocCount(); n != feederChunk {
		t.Fatalf("%d documents indexed, want the first chunk's %d", n, feederChunk)
	}
	if b, _ := text.Marker(markerApplied); len(b) != 0 {
		t.Fatalf("marker %x written by a stopped batch", b)
	}
}

// The node's backlog counts the changes its feeders hold, and drops back to zero once they are indexed, or let go
// when a feeder closes with more than it indexes then.
func TestIndexersBacklogCountsPendingChanges(t *testing.T) {
	gate := NewIndexers(1)
	doc := func(id string) []fulltext.Doc {
		return []fulltext.Doc{{ID: id, UserID: "u", Type: "episodic", Text: "a tram ride"}}
	}
	f := newTextFeeder(memText(t), 0, gate, func(err error) { t.Error(err) })
	f.add(1, doc("a"), nil)
	f.add(2, doc("b"), []string{"c"})
	f.add(3, nil, []string{"b"}) // supersedes the put of b
	if n := gate.Backlog(); n != 3 {
		t.Fatalf("backlog %d after a, c and b's delete, want 3", n)
	}
	if err := f.waitIndexed(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
	if n := gate.Backlog(); n != 0 {
		t.Fatalf("backlog %d once indexed, want 0", n)
	}
	g := newTextFeeder(memText(t), 0, gate, func(err error) { t.Error(err) })
	for i := range closeFlushMax + 1 {
		g.add(uint64(i+1), doc(fmt.Sprint(i)), nil)
	}
	if left := g.close(); left != closeFlushMax+1 || gate.Backlog() != 0 {
		t.Fatalf("closed with %d left, backlog %d; want %d left and none", left, gate.Backlog(), closeFlushMax+1)
	}
	f.close()
}

// failOnce is a text index whose first write fails.
type failOnce struct {
	*fulltext.Index
	failed atomic.Bool
}

func (f *failOnce) ApplyWithMarkers(put []fulltext.Doc, del []string, markers map[string][]byte) error {
	if !f.failed.Swap(true) {
		return errors.New("disk on fire")
	}
	return f.Index.ApplyWithMarkers(put, del, markers)
}

// A batch whose first chunk fails is reported, and the feeder goes on: later changes are indexed, readers are
// served and the node's backlog drains (a feeder that stopped there would hold every later change in memory and
// keep the node refusing writes).
func TestFeederGoesOnAfterAFailedChunk(t *testing.T) {
	gate := NewIndexers(1)
	text := &failOnce{Index: memText(t)}
	var fails atomic.Int64
	f := newTextFeeder(text, 0, gate, func(error) { fails.Add(1) })
	defer f.close()
	for i := range feederChunk + 1 {
		f.add(1, []fulltext.Doc{{ID: fmt.Sprint(i), UserID: "u", Type: "episodic", Text: "a tram ride"}}, nil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := f.waitIndexed(ctx, 1); err != nil {
		t.Fatal(err)
	}
	f.add(2, []fulltext.Doc{{ID: "after", UserID: "u", Type: "episodic", Text: "bees on the roof"}}, nil)
	if err := f.waitIndexed(ctx, 2); err != nil {
		t.Fatalf("after a failed chunk: %v", err)
	}
	if hits, err := text.Search(fulltext.Query{UserID: "u", Text: "bees", K: 5}); err != nil || len(hits) != 1 {
		t.Fatalf("the change after a failed chunk: %v %v", hits, err)
	}
	if fails.Load() != 1 || gate.Backlog() != 0 {
		t.Fatalf("%d failures reported, backlog %d; want 1 and 0", fails.Load(), gate.Backlog())
	}
}

// A reader whose changes a closing feeder leaves unindexed is told so, not answered as if they were indexed.
func TestWaitIndexedAfterACloseThatLeftChanges(t *testing.T) {
	f := newTextFeeder(memText(t), 0, nil, func(err error) { t.Error(err) })
	for i := range closeFlushMax + 1 {
		f.add(uint64(i+1), []fulltext.Doc{{ID: fmt.Sprint(i), UserID: "u", Type: "episodic", Text: "x"}}, nil)
	}
	f.close()
	if err := f.waitIndexed(context.Background(), 5); !errors.Is(err, errFeederClosed) {
		t.Fatalf("waitIndexed after close left the changes: %v, want errFeederClosed", err)
	}
}
