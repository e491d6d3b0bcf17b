// Package shardmap maps user ids to shards: each shard owns a range of one bucket of the user-hash space, so a shard can split in two without moving any other shard's users.
package shardmap
