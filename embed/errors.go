package embed

import "errors"

// Sentinel errors. Every error the package returns wraps one of these (or a
// context/network error) under a short context prefix, so callers can branch
// with errors.Is.
var (
	// ErrInvalidOptions marks options that fail validation; the message names the field.
	ErrInvalidOptions = errors.New("invalid options")
	// ErrHTTPStatus marks a non-2xx answer from an embedding server; see *StatusError.
	ErrHTTPStatus = errors.New("embedding server error")
	// ErrBadResponse marks a 2xx answer that cannot be used: malformed JSON,
	// wrong number of vectors, bad indexes or a dimension mismatch.
	ErrBadResponse = errors.New("bad embedding response")
	// ErrDimUnknown is returned when a call holds only empty texts and the
	// remote dimension has not been learned yet, so no zero vector can be built.
	ErrDimUnknown = errors.New("dimension not known yet")
	// ErrBadModel marks model files that are missing, truncated or inconsistent.
	ErrBadModel = errors.New("bad model files")
	// ErrUnsupported marks a model feature this package does not implement
	// (a tokenizer type, a tensor dtype, vocabulary quantisation).
	ErrUnsupported = errors.New("unsupported model feature")
)
