package client

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
)

// APIError is a non-2xx answer. Code, Message and Field come from the
// apiv1.Error body; when the body is not one (a proxy's HTML page, say), Code
// is empty and Message holds the start of the body.
type APIError struct {
	Status  int
	Code    string
	Message string
	Field   string
	// RetryAfter is the Retry-After of a 429 or 503, in seconds (0 when absent).
	RetryAfter int
}

// Error reads like "400 invalid_argument: user_id: required".
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(e.Status))
	b.WriteByte(' ')
	if e.Code != "" {
		b.WriteString(e.Code)
	} else {
		b.WriteString(strings.ToLower(http.StatusText(e.Status)))
	}
	msg := e.Message
	// The server's message usually names the field already ("user_id: required");
	// add it only when it does not.
	if e.Field != "" && !strings.HasPrefix(msg, e.Field+":") {
		msg = e.Field + ": " + msg
	}
	if msg != "" {
		b.WriteString(": ")
		b.WriteString(msg)
	}
	return b.String()
}

// Unwrap maps the stable codes onto the memory package's sentinels, so
// errors.Is(err, memory.ErrNotFound) works the same on both sides of the wire.
func (e *APIError) Unwrap() error {
	switch e.Code {
	case "not_found":
		return memory.ErrNotFound
	case "invalid_argument":
		return memory.ErrInvalid
	}
	return nil
}

// decodeError builds the APIError for a non-2xx answer with body b.
func decodeError(status int, b []byte) *APIError {
	var ae apiv1.Error
	if err := json.Unmarshal(b, &ae); err == nil && ae.Error.Code != "" {
		return &APIError{Status: status, Code: ae.Error.Code, Message: ae.Error.Message, Field: ae.Error.Field}
	}
	return &APIError{Status: status, Message: snippet(b)}
}

// snippet turns a foreign error body into one short line.
func snippet(b []byte) string {
	const max = 200
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(b), "\uFFFD")), " ")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max]) + "…"
}
