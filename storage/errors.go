package storage

import "errors"

// Sentinel errors of the package. Callers test them with errors.Is; the wrapping error names the detail.
var (
	// ErrFormat is returned when the DB was written by an unknown key format version.
	ErrFormat = errors.New("unsupported key format version")
	// ErrBadKey is returned when a key does not decode under this format.
	ErrBadKey = errors.New("malformed key")
	// ErrBadRecord is returned when a stored or proposed record does not decode.
	ErrBadRecord = errors.New("malformed record")
	// ErrUnknownCommand marks an entry this binary cannot decode; the replica must stop rather than skip it.
	ErrUnknownCommand = errors.New("unknown command")
	// ErrBadSnapshot is returned for a snapshot stream that does not decode or exceeds the restore limits.
	ErrBadSnapshot = errors.New("malformed snapshot")
	// ErrHalted is returned by a shard state machine that met an entry it cannot decode (or stored state it
	// cannot read back). It applies nothing more until a binary that understands the entry restarts it:
	// skipping would let this replica diverge.
	ErrHalted = errors.New("shard replica halted")
	// ErrStopped is returned by a shard state machine that was stopped while it waited for the disk to take
	// a write. The entries were not applied; the next start replays them from the raft log.
	ErrStopped = errors.New("shard state machine stopped")
	// ErrDiskIO marks a read or write of the DB that failed in a way that may succeed once the disk recovers
	// (no space, I/O error). The state machine retries such failures instead of halting.
	ErrDiskIO = errors.New("disk I/O error")
	// ErrReadOnly is returned by DB.WriteHealth while the node should refuse new writes: free space is below
	// the watermark or the disk failed a write and has not taken one since.
	ErrReadOnly = errors.New("node is read-only")
	// ErrWrongShard answers a command or read for a user this shard no longer owns (its range was split off):
	// nothing was written, and the caller routes the request again.
	ErrWrongShard = errors.New("user not owned by this shard")
	// ErrOverloaded is returned by DB.WaitWritable while the node's compactions trail its writes so far that
	// Pebble is about to stop them (or has): the write was not taken, and may be sent again after a pause.
	ErrOverloaded = errors.New("node overloaded")
	// ErrCompression is returned by Open for an Options.Compression it does not know.
	ErrCompression = errors.New("unknown table compression")
)
