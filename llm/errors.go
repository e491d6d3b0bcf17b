package llm

import "errors"

// Sentinel errors. Every error the package returns wraps one of these (or a context or
// network error) under a short context prefix, so callers can branch with errors.Is.
var (
	// ErrInvalidOptions marks options that fail validation; the message names the field.
	ErrInvalidOptions = errors.New("invalid options")
	// ErrHTTPStatus marks a non-2xx answer from the chat server; see *StatusError.
	ErrHTTPStatus = errors.New("chat server error")
	// ErrBadResponse marks a 2xx answer whose envelope cannot be used: not the
	// chat-completions shape, no choices, empty or truncated content.
	ErrBadResponse = errors.New("bad chat response")
	// ErrMalformed marks model output that is not one JSON object.
	ErrMalformed = errors.New("malformed model output")
	// ErrSchema marks model output that is JSON but violates the extraction schema;
	// the message names the field.
	ErrSchema = errors.New("model output violates the schema")
)
