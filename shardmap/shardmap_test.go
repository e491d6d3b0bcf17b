package shardmap

import (
	"errors"
	"fmt"
	"hash/fnv"
	"testing"
)

// A map that never split routes exactly as the fixed-modulo layout did: FNV-1a 64 mod shards.
func TestInitialMatchesModulo(t *testing.T) {
	m, err := New(16, Initial(16))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		id := fmt.Sprintf("user-%d", i)
		h := fnv.New64a()
		h.Write([]byte(id))
		if got, want := m.Lookup(id), uint32(h.Sum64()%16); got != want {
			t.Fatalf("%s: shard %d, modulo says %d", id, got, want)
		}
	}
}

// Splitting moves only users of the split shard, and about half of them, even for ids differing at the end.
func TestSplitMovesHalfOfOneShard(t *testing.T) {
	ranges := Initial(4)
	lower, upper, err := ranges[2].Split()
	if err != nil {
		t.Fatal(err)
	}
	before, _ := New(4, ranges)
	ranges = append(append([]Range(nil), ranges...), upper)
	ranges[2] = lower
	after, err := New(4, ranges)
	if err != nil {
		t.Fatal(err)
	}
	moved, stayed := 0, 0
	for i := range 4000 {
		id := fmt.Sprintf("user-%04d", i)
		b, a := before.Lookup(id), after.Lookup(id)
		switch {
		case b == a && b == 2:
			stayed++
		case b == 2 && a == 4:
			moved++
		case b != a:
			t.Fatalf("%s moved from %d to %d", id, b, a)
		}
	}
	if moved < 400 || stayed < 400 {
		t.Fatalf("split moved %d and kept %d of shard 2's users: not about half", moved, stayed)
	}
}

func TestNewRefusesGapsAndOverlaps(t *testing.T) {
	r := Initial(2)
	lower, upper, _ := r[0].Split()
	for name, ranges := range map[string][]Range{
		"gap":     {lower, r[1]},
		"overlap": {r[0], r[1], upper},
		"bucket":  {r[0], Whole(5)},
	} {
		if _, err := New(2, ranges); !errors.Is(err, ErrBadMap) {
			t.Errorf("%s: got %v, want ErrBadMap", name, err)
		}
	}
	if _, _, err := (Range{First: 7, Last: 7}).Split(); !errors.Is(err, ErrUnsplittable) {
		t.Errorf("single position: %v", err)
	}
}
