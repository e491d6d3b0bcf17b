package mem0

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/memcluster/memcluster/client"
	"github.com/memcluster/memcluster/internal/httpjson"
)

// Sentinel errors of the adapter. Each answer's message says more; the sentinel picks the status.
var (
	// ErrInvalid marks a request the adapter cannot take as sent (400).
	ErrInvalid = errors.New("invalid request")
	// ErrUnsupported marks a mem0 feature memcluster does not offer (501).
	ErrUnsupported = errors.New("not supported by memcluster")
	// ErrNotFound marks an id the adapter does not know (404).
	ErrNotFound = errors.New("not found")
	// ErrUnauthenticated marks a request without credentials where the node requires them (401).
	ErrUnauthenticated = errors.New("no API key")
)

func invalidf(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}

func notFoundf(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrNotFound, fmt.Sprintf(format, a...))
}

func unsupportedf(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, a...))
}

// errorBody is every error answer: mem0's clients read "detail" (the Python client raises with it), its
// OpenAPI document names "error"; both carry the same sentence.
type errorBody struct {
	Detail string `json:"detail"`
	Error  string `json:"error"`
	Code   string `json:"code"`
}

// writeError answers err: an *client.APIError from /v1 keeps its status, code and message (the Retry-After
// of a 429 too); the adapter's own sentinels map to 400, 404, 401 and 501.
func writeError(w http.ResponseWriter, err error) {
	status, code := http.StatusInternalServerError, "internal"
	var api *client.APIError
	switch {
	case errors.As(err, &api):
		status, code = api.Status, api.Code
		if api.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(api.RetryAfter))
		}
	case errors.Is(err, ErrInvalid):
		status, code = http.StatusBadRequest, "invalid_argument"
	case errors.Is(err, ErrNotFound):
		status, code = http.StatusNotFound, "not_found"
	case errors.Is(err, ErrUnauthenticated):
		status, code = http.StatusUnauthorized, "unauthenticated"
	case errors.Is(err, ErrUnsupported):
		status, code = http.StatusNotImplemented, "not_implemented"
	}
	if code == "" {
		code = "error"
	}
	writeJSON(w, status, errorBody{Detail: err.Error(), Error: err.Error(), Code: code})
}

// writeJSON answers with v; a value that cannot be encoded becomes a 500 that says so.
func writeJSON(w http.ResponseWriter, status int, v any) {
	if err := httpjson.Write(w, status, v); err != nil {
		_ = httpjson.Write(w, http.StatusInternalServerError, errorBody{Detail: err.Error(), Error: err.Error(), Code: "internal"})
	}
}
