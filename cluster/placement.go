package cluster

import (
	"hash/fnv"
	"slices"
	"sort"
)

// ShardFor maps a user id to a shard with a stable hash (FNV-1a 64): the mapping never changes for a cluster's
// lifetime because the shard count is fixed when the cluster forms.
func ShardFor(userID string, shards int) uint32 {
	h := fnv.New64a()
	h.Write([]byte(userID))
	return uint32(h.Sum64() % uint64(shards))
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
