// Package tiering is the pure core of hot/cold tiering: which memories leave the hot tier
// (policy.go, group.go), the immutable compressed segment they go to (segment.go, items.go, codec.go), the
// keys and stores that hold segments (key.go, store.go, blobstore.go: memory, a local directory or S3 through
// gocloud.dev/blob), and the archive entry that stays hot and searchable in their place (archive.go,
// summary.go).
//
// Nothing here talks to Raft, Pebble or the indexes, and nothing reads a clock: now and the access
// statistics are inputs, so a leader can decide once, upload the segment, and propose a command that
// carries only the segment key, the archive record and the ids to delete. tiering/storetest is the
// conformance suite every SegmentStore passes. See DESIGN.md for the formats and the reasoning.
package tiering
