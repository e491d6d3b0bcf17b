package raftstore

import "errors"

// Sentinel errors. Callers match them with errors.Is: store operations wrap
// them with the operation and index or key that failed. A missing log entry
// is instead raft.ErrLogNotFound, unwrapped, because raft's replication
// compares against it with ==.
var (
	// ErrEmptyPrefix is returned by New for an empty key prefix: without a
	// prefix a store would claim the whole DB, including other shards.
	ErrEmptyPrefix = errors.New("raftstore: empty key prefix")

	// ErrUnknownFormat is returned when a stored log entry carries an
	// encoding version this build does not know, e.g. after a downgrade.
	ErrUnknownFormat = errors.New("raftstore: unknown log encoding version")

	// ErrCorrupt is returned when a stored key or value cannot be decoded,
	// or a decoded entry does not belong where it was found.
	ErrCorrupt = errors.New("raftstore: corrupt record")
)
