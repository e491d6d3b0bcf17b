// Package cluster runs a memnode's part of the cluster: gossip membership, the meta Raft group that holds
// members and shard placement, one Raft group per local shard replica, and the loops that keep them converged.
package cluster
