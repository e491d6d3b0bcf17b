package fulltext

import "errors"

// Sentinel errors. Other errors are wrapped with the operation that failed.
var (
	// ErrEmptyQuery is returned by Search when the query text is empty or only white space.
	ErrEmptyQuery = errors.New("fulltext: empty query text")
	// ErrOutdated is returned by Open when the index on disk was built with a different mapping
	// version (or analyzer); the owner should Destroy it and rebuild from its records.
	ErrOutdated = errors.New("fulltext: index mapping is outdated")
	// ErrDamaged is returned by Open when the index on disk cannot be opened (a crash or a bad disk); the
	// owner should Destroy it and rebuild from its records, as for ErrOutdated.
	ErrDamaged = errors.New("fulltext: index on disk cannot be opened")
	// ErrInvalid marks bad options, documents or queries; the message names the problem.
	ErrInvalid = errors.New("fulltext: invalid argument")
	// ErrClosed is returned by every method after Close.
	ErrClosed = errors.New("fulltext: index closed")
	// ErrNotIndex is returned by Destroy when dir exists but does not look like an index, so a
	// mistaken path never wipes unrelated data.
	ErrNotIndex = errors.New("fulltext: not an index directory")
)
