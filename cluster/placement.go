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

// Repair returns the placement that drops gone nodes and fills each shard up to want replicas from live
// nodes, preferring the least loaded; shards already in order are returned unchanged. It is a pure function so
// that the policy is tested on its own.
func Repair(p [][]string, live []string, gone map[string]bool, want int) [][]string {
	want = min(want, len(live))
	load := map[string]int{}
	for _, n := range live {
		load[n] = 0
	}
	for _, reps := range p {
		for _, n := range reps {
			if !gone[n] {
				load[n]++
			}
		}
	}
	out := make([][]string, len(p))
	for s, reps := range p {
		var keep []string
		for _, n := range reps {
			if !gone[n] {
				keep = append(keep, n)
			}
		}
		for len(keep) < want {
			n := leastLoaded(live, keep, load)
			if n == "" {
				break
			}
			keep = append(keep, n)
			load[n]++
		}
		sort.Strings(keep)
		out[s] = keep
	}
	return out
}

func leastLoaded(live, exclude []string, load map[string]int) string {
	best := ""
	for _, n := range live {
		if slices.Contains(exclude, n) {
			continue
		}
		if best == "" || load[n] < load[best] || (load[n] == load[best] && n < best) {
			best = n
		}
	}
	return best
}
