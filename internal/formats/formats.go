// Package formats holds the version number of every data format memcluster writes to disk or into its Raft logs.
// The owning packages define their constants from these (storage.KeyFormatVersion = formats.Keys, …), so that
// `memnode --version` and `memctl version` can name them without linking the storage engine into memctl.
// Bumping one is a format change: the owner must keep reading the older version or refuse it clearly.
package formats

const (
	// Keys is the Pebble key layout of a node's DB (storage/keys.go), stored under "\x00fmt".
	Keys = 1
	// Record is the encoding of a stored memory record (storage/record.go); it reads RecordOldest..Record (1
	// holds the embedding in float32, 2 as the vector index stores its rows: half precision and a scale, 3 that
	// embedding and the other fields in binary instead of JSON).
	Record       = 3
	RecordOldest = 1
	// Command is the encoding of a shard's Raft log entries (storage/command.go); it reads
	// CommandOldest..Command (1 carries a user transaction's header in JSON, 2 in binary fields; every other
	// command is the same in both).
	Command       = 2
	CommandOldest = 1
	// Snapshot is the shard snapshot stream (storage/snapshot.go).
	Snapshot = 1
	// Meta is the meta group's replicated state (cluster/meta.go); it reads MetaOldest..Meta.
	Meta       = 2
	MetaOldest = 1
	// Segment is the cold segment encoding (tiering/segment.go).
	Segment = 1
	// Export is the JSON Lines layout of memctl export (transfer/format.go); import reads 1..Export.
	Export = 1
	// Backup is the whole-cluster backup file (backup/format.go).
	Backup = 1
	// VectorCheckpoint is a shard replica's checkpoint of its vectors and filter attributes
	// (retrieval/checkpoint_format.go); it reads VectorCheckpointOldest..VectorCheckpoint (1 holds float32
	// vectors, 2 the rows as the index stores them), and a checkpoint of another version is ignored and the
	// records are read.
	VectorCheckpoint       = 2
	VectorCheckpointOldest = 1
	// DroppedMarker is the value a node stores for a shard replica it deleted (cluster/dropped.go): 2 holds the
	// last index the replica held; 1, one byte, does not, and reads as an unknown index.
	DroppedMarker       = 2
	DroppedMarkerOldest = 1
	// FulltextMapping is the bleve index mapping (fulltext/mapping.go); an index of another version is rebuilt.
	FulltextMapping = "3"
)
