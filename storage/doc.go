// Package storage keeps a node's durable state in one Pebble DB: a versioned keyspace per shard, the commands
// that change it, and the deterministic state machine that applies them.
package storage
