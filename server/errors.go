package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/cluster"
	"github.com/memcluster/memcluster/memory"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg, field string) {
	if status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, apiv1.Error{Error: apiv1.ErrorBody{Code: code, Message: msg, Field: field}})
}

// fail maps an error to its HTTP answer: validation is the caller's fault (400/404), an unavailable shard is
// retryable (503), anything else is ours (500, logged).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var ve *memory.ValidationError
	switch {
	case errors.As(err, &ve):
		writeError(w, http.StatusBadRequest, "invalid_argument", ve.Error(), ve.Field)
	case errors.Is(err, memory.ErrInvalid):
		writeError(w, http.StatusBadRequest, "invalid_argument", err.Error(), "")
	case errors.Is(err, memory.ErrNotFound):
		writeError(w, http.StatusNotFound, "not_found", err.Error(), "")
	case errors.Is(err, cluster.ErrNoLeader), errors.Is(err, cluster.ErrStopped),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, cluster.ErrNotLeader):
		writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error(), "")
	default:
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, "internal", err.Error(), "")
	}
}

// decodeBody reads a bounded JSON body strictly: valid UTF-8 (encoding/json would silently replace bad bytes),
// one object, no unknown fields. Errors name the field where one is at fault.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		writeError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("body larger than %d bytes", mbe.Limit), "")
		return false
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_argument", "read body: "+err.Error(), "")
		return false
	}
	if !utf8.Valid(body) {
		writeError(w, http.StatusBadRequest, "invalid_argument", "body is not valid UTF-8", "")
		return false
	}
	d := json.NewDecoder(strings.NewReader(string(body)))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		msg, field := describeJSONError(err)
		if field == "" {
			field = badTimeField(body)
			if field != "" {
				msg = field + ": not an RFC 3339 time (e.g. 2026-03-01T08:00:00Z)"
			}
		}
		writeError(w, http.StatusBadRequest, "invalid_argument", msg, field)
		return false
	}
	if d.More() {
		writeError(w, http.StatusBadRequest, "invalid_argument", "body has data after the JSON object", "")
		return false
	}
	return true
}

func describeJSONError(err error) (msg, field string) {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		return fmt.Sprintf("%s: must be %s, not %s", te.Field, te.Type, te.Value), te.Field
	case errors.As(err, &se):
		return fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, err), ""
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return "unknown field " + f, f
	case errors.Is(err, io.EOF):
		return "empty body: a JSON object is required", ""
	}
	// time.Time parse errors and the like: name the value's problem as encoding/json reports it.
	return "invalid JSON: " + err.Error(), ""
}

// badTimeField finds the top-level field holding an unparseable time: encoding/json's time errors do not say
// which field they came from.
func badTimeField(body []byte) string {
	var raw map[string]json.RawMessage
	if json.Unmarshal(body, &raw) != nil {
		return ""
	}
	for _, f := range []string{"occurred_at", "from", "to"} {
		v, ok := raw[f]
		if !ok || string(v) == "null" {
			continue
		}
		var t time.Time
		if json.Unmarshal(v, &t) != nil {
			return f
		}
	}
	return ""
}
