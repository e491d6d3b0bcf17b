package backup

import "errors"

// Sentinel errors; every error Reader returns for a bad file wraps one of them.
var (
	// ErrForeign: the file is not a memcluster backup (its magic is wrong).
	ErrForeign = errors.New("not a memcluster backup")
	// ErrVersion: a backup of a format version this build does not read.
	ErrVersion = errors.New("unsupported backup format version")
	// ErrTruncated: the file ends before its trailer.
	ErrTruncated = errors.New("backup is truncated")
	// ErrCorrupt: a checksum, a length or a structure does not match.
	ErrCorrupt = errors.New("backup is corrupt")
	// ErrClosed: a write after Close, or a part opened before the previous one was closed.
	ErrClosed = errors.New("backup writer misuse")
	// ErrLocation: a backup location that cannot be opened.
	ErrLocation = errors.New("backup location")
)
