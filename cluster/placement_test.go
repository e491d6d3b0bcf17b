package cluster

import (
	"fmt"
	"reflect"
	"testing"
)

func TestInitialPlacementSpreadsEvenly(t *testing.T) {
	p := InitialPlacement([]string{"c", "a", "b"}, 6, 3)
	load := map[string]int{}
	for s, reps := range p {
		if len(reps) != 3 {
			t.Fatalf("shard %d has %v", s, reps)
		}
		for _, n := range reps {
			load[n]++
		}
	}
	if !reflect.DeepEqual(load, map[string]int{"a": 6, "b": 6, "c": 6}) {
		t.Fatalf("load %v", load)
	}
	// Fewer nodes than replicas: capped, never duplicated.
	p = InitialPlacement([]string{"a"}, 2, 3)
	if !reflect.DeepEqual(p, [][]string{{"a"}, {"a"}}) {
		t.Fatalf("one node: %v", p)
	}
	// Every bootstrapper computes the same placement whatever order it saw members in.
	if !reflect.DeepEqual(InitialPlacement([]string{"b", "a", "c", "d"}, 8, 3), InitialPlacement([]string{"d", "c", "b", "a"}, 8, 3)) {
		t.Fatal("placement depends on member order")
	}
}

func TestRepair(t *testing.T) {
	tests := []struct {
		name string
		in   [][]string
		live []string
		gone []string
		want int
		out  [][]string
	}{
		{"healthy stays put", [][]string{{"a", "b", "c"}}, []string{"a", "b", "c"}, nil, 3, [][]string{{"a", "b", "c"}}},
		{"dead but not gone: no move yet", [][]string{{"a", "b", "c"}}, []string{"a", "b"}, nil, 3, [][]string{{"a", "b", "c"}}},
		{"gone is replaced by the spare", [][]string{{"a", "b", "c"}}, []string{"a", "b", "d"}, []string{"c"}, 3, [][]string{{"a", "b", "d"}}},
		{"gone without a spare shrinks", [][]string{{"a", "b", "c"}}, []string{"a", "b"}, []string{"c"}, 3, [][]string{{"a", "b"}}},
		{"joiner fills under-replicated shards", [][]string{{"a"}, {"a"}}, []string{"a", "b", "c"}, nil, 3,
			[][]string{{"a", "b", "c"}, {"a", "b", "c"}}},
		{"least loaded first", [][]string{{"a", "b"}, {"a", "c"}, {"b", "c"}}, []string{"a", "b", "c", "d"}, nil, 3,
			[][]string{{"a", "b", "d"}, {"a", "c", "d"}, {"a", "b", "c"}}}, // ties go to the lowest id
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gone := map[string]bool{}
			for _, g := range tc.gone {
				gone[g] = true
			}
			got := Repair(tc.in, tc.live, gone, tc.want)
			if !reflect.DeepEqual(got, tc.out) {
				t.Fatalf("Repair = %v, want %v", got, tc.out)
			}
		})
	}
}

func TestShardForIsStableAndSpread(t *testing.T) {
	counts := make([]int, 16)
	for i := 0; i < 16000; i++ {
		counts[ShardFor(fmt.Sprintf("user-%d", i), 16)]++
	}
	for s, c := range counts {
		if c < 800 || c > 1200 {
			t.Fatalf("shard %d got %d of 16000 users", s, c)
		}
	}
	// The mapping is part of the data format: changing the hash would strand every user's data.
	if ShardFor("alice", 16) != 7 || ShardFor("bob", 16) != 4 || ShardFor("alice", 1024) != 263 {
		t.Fatal("the user→shard hash changed")
	}
}
