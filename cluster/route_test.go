package cluster

import (
	"testing"
	"time"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// A put across users planned with an older map is cut in one command per shard that owns some of them.
func TestCutByOwner(t *testing.T) {
	now := time.Unix(1700000000, 0).UTC()
	var ms []memory.Memory
	for i, u := range []string{"a", "b", "a", "c"} {
		ms = append(ms, memory.Memory{ID: idSource.New(now.Add(time.Duration(i))), UserID: u, Type: memory.Episodic,
			Text: "t", OccurredAt: now, CreatedAt: now})
	}
	cmd, err := storage.EncodePut(ms)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := storage.DecodeCommand(cmd)
	owner := map[string]uint32{"a": 1, "b": 4, "c": 1}
	parts, err := cutByOwner(c, cmd, func(u string) uint32 { return owner[u] }, storage.Encoder{})
	if err != nil || len(parts) != 2 {
		t.Fatalf("%d parts, %v", len(parts), err)
	}
	for shard, b := range parts {
		pc, err := storage.DecodeCommand(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range pc.Users() {
			if owner[u] != shard {
				t.Fatalf("user %s in the part for shard %d", u, shard)
			}
		}
		if want := map[uint32]int{1: 3, 4: 1}[shard]; len(pc.Puts) != want {
			t.Fatalf("shard %d got %d puts, want %d", shard, len(pc.Puts), want)
		}
	}
}
