package retrieval

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memcluster/memcluster/fulltext"
)

// heldText is a full-text index whose batches announce themselves on entered and then wait for a value on
// proceed.
type heldText struct {
	*fulltext.Index
	entered chan string
	proceed chan struct{}
	name    string
}

func (h *heldText) ApplyWithMarkers(put []fulltext.Doc, del []string, m map[string][]byte) error {
	h.entered <- h.name
	<-h.proceed
	return h.Index.ApplyWithMarkers(put, del, m)
}

// Replicas' batches take turns on a node's Indexers, a leader's as a follower's; a feeder waiting for a turn
// goes ahead when a reader waits for it, and every batch is indexed in the end.
func TestReplicasIndexInTurns(t *testing.T) {
	gate := NewIndexers(1)
	entered := make(chan string, 8)
	feeders := map[string]*textFeeder{}
	texts := map[string]*heldText{}
	for _, name := range []string{"a", "b", "c", "d"} {
		h := &heldText{Index: memText(t), entered: entered, proceed: make(chan struct{}), name: name}
		texts[name] = h
		f := newTextFeeder(h, 0, gate, func(err error) { t.Error(err) })
		feeders[name] = f
		t.Cleanup(func() { close(h.proceed); f.close() })
	}
	feeders["d"].setLeader(true)
	add := func(name string, idx uint64) {
		feeders[name].add(idx, []fulltext.Doc{{ID: fmt.Sprintf("%s%d", name, idx), UserID: "u", Type: "episodic", Text: "bees"}}, nil)
		feeders[name].hurry() // end the linger
	}
	next := func() string {
		t.Helper()
		select {
		case n := <-entered:
			return n
		case <-time.After(10 * time.Second):
			t.Fatal("no batch started")
			return ""
		}
	}
	quiet := func() {
		t.Helper()
		select {
		case n := <-entered:
			t.Fatalf("follower %s built a batch while another held the only turn", n)
		case <-time.After(200 * time.Millisecond):
		}
	}

	add("a", 1)
	if n := next(); n != "a" {
		t.Fatalf("first batch from %s", n)
	}
	add("b", 1)
	add("c", 1)
	add("d", 1)
	quiet()

	// b is promoted while a holds the turn: it still waits, as d, a leader, does.
	feeders["b"].setLeader(true)
	quiet()

	// A reader waits for c: it goes ahead, and the wait returns.
	waited := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		waited <- feeders["c"].waitIndexed(ctx, 1)
	}()
	if n := next(); n != "c" {
		t.Fatalf("with a reader waiting for c, a batch from %s", n)
	}
	texts["c"].proceed <- struct{}{}
	if err := <-waited; err != nil {
		t.Fatalf("reader of c: %v", err)
	}
	quiet() // b and d still wait for a's turn
	for deadline := time.Now().Add(10 * time.Second); gate.Stats().Waiting != 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for a turn: %+v, want b and d", gate.Stats())
		}
	}

	// Each of them builds in a turn of its own once a's ends.
	texts["a"].proceed <- struct{}{}
	first := next()
	if first != "b" && first != "d" {
		t.Fatalf("after a's batch, a batch from %s", first)
	}
	quiet()
	texts[first].proceed <- struct{}{}
	second := next()
	if second == first || (second != "b" && second != "d") {
		t.Fatalf("after %s's batch, a batch from %s", first, second)
	}
	texts[second].proceed <- struct{}{}
	if st := gate.Stats(); st.Waiting != 0 || st.Waited <= 0 {
		t.Fatalf("after the turns: %+v", st)
	}
	for name, f := range feeders {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := f.waitIndexed(ctx, 1)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if hits, err := texts[name].Search(fulltext.Query{UserID: "u", Text: "bees", K: 5}); err != nil || len(hits) != 1 {
			t.Fatalf("%s indexed %v, %v", name, hits, err)
		}
	}
}

// A checkpoint waits for a turn a batch holds, and one whose index closes meanwhile gives up without running.
func TestCheckpointsTakeTurns(t *testing.T) {
	gate := NewIndexers(1)
	gate.sem <- struct{}{} // a batch's turn
	ran, done := make(chan struct{}), make(chan struct{})
	go func() {
		gate.inTurn(nil, func() { close(ran) })
		close(done)
	}()
	select {
	case <-ran:
		t.Fatal("a checkpoint ran while a batch held the only turn")
	case <-time.After(20 * time.Millisecond):
	}
	gate.release()
	<-done
	<-ran

	gate.sem <- struct{}{}
	stop := make(chan struct{})
	close(stop)
	gate.inTurn(stop, func() { t.Fatal("a checkpoint ran after its index closed") })
}
