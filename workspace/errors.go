package workspace

import "errors"

// Errors of the package.
var (
	// ErrInvalidOptions: an options struct is missing a required field or holds a bad value.
	ErrInvalidOptions = errors.New("invalid options")
	// ErrBadFile: a workspace file cannot be indexed (too large, not UTF-8, not a regular file).
	ErrBadFile = errors.New("cannot index file")
	// ErrMismatch: what the server returned does not match the manifest it holds (export refuses to write it).
	ErrMismatch = errors.New("content does not match its manifest")
)
