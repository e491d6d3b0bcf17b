package vector

import "errors"

// Sentinel errors. Returned errors wrap one of these and add the detail.
var (
	// ErrDimension is returned when a vector's length differs from the index dimension.
	ErrDimension = errors.New("vector: dimension mismatch")
	// ErrEmptyID is returned when an id is empty; empty ids could not be told apart in hits.
	ErrEmptyID = errors.New("vector: empty id")
)
