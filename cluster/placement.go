package cluster

import (
	"slices"
	"sort"

	"github.com/memcluster/memcluster/shardmap"
)

// ShardFor maps a user id to a shard of a cluster that formed with shards shards and never split (FNV-1a 64
// mod shards); a running cluster routes with its shard map (MetaState.Route).
func ShardFor(userID string, shards int) uint32 {
	return uint32(shardmap.Hash(userID) % uint64(shards))
}

// InitialPlacement spreads shards over nodes round-robin: shard i gets nodes i, i+1, … (mod n) of the sorted
// ids. Every bootstrapping node computes it alone, and they agree because the inputs are the same.
func InitialPlacement(nodes []string, shards, replicas int) [][]string {
	ids := slices.Clone(nodes)
	sort.Strings(ids)
	r := min(replicas, len(ids))
	out := make([][]string, shards)
	for s := range out {
		for j := 0; j < r; j++ {
			out[s] = append(out[s], ids[(s+j)%len(ids)])
		}
		sort.Strings(out[s])
	}
	return out
}
