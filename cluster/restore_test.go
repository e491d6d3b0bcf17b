package cluster

import (
	"errors"
	"slices"
	"testing"

	"github.com/memcluster/memcluster/shardmap"
)

// A backup's layout is reached from a fresh cluster's by replaying its splits in shard id order; a layout that
// no sequence of splits reaches is refused.
func TestPlanSplits(t *testing.T) {
	fresh := shardmap.Initial(4)
	// The source split shard 1, then shard 4 (1's upper half), then shard 1 again.
	src := slices.Clone(fresh)
	for _, p := range []int{1, 4, 1} {
		lower, upper, err := src[p].Split()
		if err != nil {
			t.Fatal(err)
		}
		src[p] = lower
		src = append(src, upper)
	}
	plan, err := planSplits(fresh, src)
	if err != nil || !slices.Equal(plan, []uint32{1, 4, 1}) {
		t.Fatalf("plan %v %v", plan, err)
	}
	if plan, err := planSplits(fresh, fresh); err != nil || len(plan) != 0 {
		t.Fatalf("same layout: %v %v", plan, err)
	}
	odd := slices.Clone(fresh)
	odd[2].Last /= 3
	if _, err := planSplits(fresh, odd); !errors.Is(err, ErrRefused) {
		t.Fatalf("unreachable layout: %v", err)
	}
	if _, err := planSplits(src, fresh); !errors.Is(err, ErrRefused) {
		t.Fatalf("fewer shards than the target: %v", err)
	}
}
