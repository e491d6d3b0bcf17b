package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/cluster"
	"github.com/memcluster/memcluster/internal/httpjson"
	"github.com/memcluster/memcluster/internal/tenant"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// writeJSON answers with v; a value that cannot be encoded (a NaN score, say) becomes a 500 that says so.
func writeJSON(w http.ResponseWriter, status int, v any) {
	if err := httpjson.Write(w, status, v); err != nil {
		_ = httpjson.Write(w, http.StatusInternalServerError, apiv1.Error{Error: apiv1.ErrorBody{Code: "internal", Message: err.Error()}})
	}
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
	case errors.Is(err, tenant.ErrForbidden):
		// The shard refused what the door let through: a bug at the door, held by the second line.
		s.log.Error("shard refused a request outside its identity", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusForbidden, "forbidden", err.Error(), "user_id")
	case errors.Is(err, cluster.ErrUnknownNode), errors.Is(err, cluster.ErrUnknownShard):
		writeError(w, http.StatusNotFound, "not_found", err.Error(), "")
	case errors.Is(err, cluster.ErrRefused):
		writeError(w, http.StatusConflict, "refused", err.Error(), "")
	case errors.Is(err, cluster.ErrOutcomeUnknown):
		// Not "unavailable": a client that retries a write on Retry-After could apply it twice.
		writeError(w, http.StatusGatewayTimeout, "outcome_unknown", err.Error(), "")
	case errors.Is(err, storage.ErrOverloaded):
		// Refused before it was proposed: sending it again after Retry-After is safe.
		s.metrics.overloaded.Inc()
		writeError(w, http.StatusServiceUnavailable, "overloaded", err.Error(), "")
	case errors.Is(err, cluster.ErrRemoved):
		writeError(w, http.StatusServiceUnavailable, "node_removed", err.Error()+": send requests to another node", "")
	case errors.Is(err, cluster.ErrNoLeader), errors.Is(err, cluster.ErrStopped),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, cluster.ErrNotLeader), errors.Is(err, storage.ErrWrongShard):
		writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error(), "")
	default:
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, "internal", err.Error(), "")
	}
}

// decodeBody reads a bounded body by the route's rule, strictly, into v — the one parse of the body there is:
// one JSON object and nothing after it but whitespace, valid UTF-8, no unknown, duplicate or differently cased
// member names (a parser that took the first of two user_id members, or matched "USER_ID", would see another
// user than this one). A body of another media type is 415. Errors name the field at fault.
func decodeBody(w http.ResponseWriter, r *http.Request, rule bodyRule, v any) bool {
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
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	switch {
	case len(trimmed) == 0 && rule == bodyRequired:
		writeError(w, http.StatusBadRequest, "invalid_argument", "empty body: a JSON object is required", "")
		return false
	case len(trimmed) == 0:
		return true
	case rule == bodyNone:
		writeError(w, http.StatusBadRequest, "invalid_argument", r.Method+" "+r.Pattern+" takes no body", "")
		return false
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && !mediaJSON(ct) {
		writeError(w, http.StatusUnsupportedMediaType, "unsupported_media_type",
			fmt.Sprintf("Content-Type %q: the body must be application/json", ct), "")
		return false
	}
	if trimmed[0] != '{' {
		writeError(w, http.StatusBadRequest, "invalid_argument", "body must be one JSON object", "")
		return false
	}
	if err := jsonv2.Unmarshal(body, v, jsonv2.RejectUnknownMembers(true)); err != nil {
		msg, field := describeJSONError(err)
		writeError(w, http.StatusBadRequest, "invalid_argument", msg, field)
		return false
	}
	return true
}

// describeJSONError names what is wrong with a body and, where one is at fault, the field ("memories[2].text").
func describeJSONError(err error) (msg, field string) {
	var se *jsonv2.SemanticError
	var syn *jsontext.SyntacticError
	switch {
	case errors.As(err, &se):
		field = pointerField(se.JSONPointer)
		switch {
		case se.Err != nil && strings.Contains(se.Err.Error(), "unknown object member"):
			return "unknown field " + field, field
		case se.GoType != nil && se.GoType.String() == "time.Time":
			return field + ": not an RFC 3339 time (e.g. 2026-03-01T08:00:00Z)", field
		case se.GoType != nil && se.JSONKind != 0:
			return fmt.Sprintf("%s: must be %s, not a JSON %s", field, se.GoType, se.JSONKind), field
		}
		return field + ": " + strings.TrimPrefix(err.Error(), "json: "), field
	case errors.As(err, &syn):
		if strings.Contains(err.Error(), "duplicate object member") {
			f := pointerField(syn.JSONPointer)
			return "malformed JSON: " + strings.TrimPrefix(err.Error(), "jsontext: "), f
		}
		msg := strings.TrimPrefix(err.Error(), "jsontext: ")
		if i := strings.LastIndex(msg, " after offset "); i > 0 {
			msg = msg[:i] // the offset is said once, up front
		}
		return fmt.Sprintf("malformed JSON at byte %d: %s", syn.ByteOffset, msg), ""
	}
	return "invalid JSON: " + err.Error(), ""
}

// pointerField turns a JSON pointer (/memories/2/text) into a field name (memories[2].text).
func pointerField(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		if _, err := strconv.Atoi(tok); err == nil && b.Len() > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}
