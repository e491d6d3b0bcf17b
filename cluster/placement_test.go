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
