package tiering

import "errors"

// Sentinel errors of the package. Callers test them with errors.Is; the wrapping error names the detail.
var (
	// ErrInvalid marks input the package refuses: a segment of mixed users, an unknown class, bad options.
	ErrInvalid = errors.New("invalid tiering input")
	// ErrCorrupt is returned for segment bytes that fail the checksum or do not decode: a torn upload, bit
	// rot, or not a segment at all. The hot copy of the items is gone once a segment is committed, so a
	// caller must report this, never skip it silently.
	ErrCorrupt = errors.New("corrupt segment")
	// ErrVersion is returned for a segment written in a format version this binary does not read.
	ErrVersion = errors.New("unsupported segment format version")
	// ErrTooLarge is returned for a segment whose header claims more items or bytes than the decode limits
	// allow (a decompression bomb is refused before it is inflated).
	ErrTooLarge = errors.New("segment exceeds decode limits")
	// ErrNotFound is returned by SegmentStore.Get for a key that holds no segment.
	ErrNotFound = errors.New("segment not found")
	// ErrConflict is returned by SegmentStore.Put for a key that already holds different bytes. Segments are
	// immutable; a key names exactly one content.
	ErrConflict = errors.New("segment key holds different bytes")
	// ErrBadKey is returned by a SegmentStore for a key or prefix outside the key alphabet (see ValidKey).
	ErrBadKey = errors.New("malformed segment key")
)
