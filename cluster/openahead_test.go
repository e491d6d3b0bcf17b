package cluster

import (
	"errors"
	"sync"
	"testing"
)

// countedIndex is a ShardIndex that only counts its closes (the embedded nil interface is never called).
type countedIndex struct {
	ShardIndex
	shard  uint32
	closed *sync.Map
}

func (c countedIndex) Close() error { c.closed.Store(c.shard, true); return nil }

// Indexes opened ahead go to the replica start that asks for them, once; the rest are closed; a shard not
// opened ahead is opened by the factory when asked; an open's error reaches the start.
func TestIndexesAheadHandOverOrClose(t *testing.T) {
	var opened, closed sync.Map
	boom := errors.New("boom")
	factory := func(s uint32) (ShardIndex, error) {
		if n, loaded := opened.LoadOrStore(s, 1); loaded {
			opened.Store(s, n.(int)+1)
		}
		if s == 3 {
			return nil, boom
		}
		return countedIndex{shard: s, closed: &closed}, nil
	}
	a := openIndexesAhead(factory, []uint32{0, 1, 2, 3})
	if idx, err := a.opener(1); err != nil || idx.(countedIndex).shard != 1 {
		t.Fatalf("opener(1) = %v, %v", idx, err)
	}
	if _, err := a.opener(3); !errors.Is(err, boom) {
		t.Fatalf("opener(3) error = %v, want boom", err)
	}
	if idx, err := a.opener(7); err != nil || idx.(countedIndex).shard != 7 {
		t.Fatalf("opener(7) = %v, %v", idx, err)
	}
	if idx, err := a.opener(1); err != nil || idx.(countedIndex).shard != 1 {
		t.Fatalf("second opener(1) = %v, %v", idx, err)
	}
	a.close()
	for s, want := range map[uint32]int{0: 1, 1: 2, 2: 1, 3: 1, 7: 1} {
		if n, _ := opened.Load(s); n != want {
			t.Errorf("shard %d opened %v times, want %d", s, n, want)
		}
	}
	for s, want := range map[uint32]bool{0: true, 1: false, 2: true, 7: false} {
		if _, got := closed.Load(s); got != want {
			t.Errorf("shard %d closed = %v, want %v", s, got, want)
		}
	}
	openIndexesAhead(nil, []uint32{1}).close() // no factory: nothing to open
	if idx, err := openIndexesAhead(nil, nil).opener(1); idx != nil || err != nil {
		t.Fatalf("opener without a factory = %v, %v", idx, err)
	}
}
