package consolidation

import "errors"

// Sentinel errors. Every error the package returns wraps one of these under a short
// context prefix that names the offending field or value, so callers can map them to 4xx
// answers with errors.Is.
var (
	// ErrInvalidOptions marks options that fail validation; the message names the field.
	ErrInvalidOptions = errors.New("invalid options")
	// ErrInvalidInput marks a message, candidate, sample or argument that cannot be used;
	// the message names the problem. Nothing is changed when it is returned.
	ErrInvalidInput = errors.New("invalid input")
)
