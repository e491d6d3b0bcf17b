package server

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/cluster"
)

// A write whose caller's time ran out after its leader took it is 504 outcome_unknown without Retry-After: a
// client that retried it as it retries a 503 could apply it twice.
func TestOutcomeUnknownIsNotAskedToRetry(t *testing.T) {
	w := httptest.NewRecorder()
	(&Server{}).fail(w, httptest.NewRequest(http.MethodPost, "/v1/memories", nil),
		fmt.Errorf("put: %w", cluster.ErrOutcomeUnknown))
	if w.Code != http.StatusGatewayTimeout || w.Header().Get("Retry-After") != "" ||
		!strings.Contains(w.Body.String(), `"code":"outcome_unknown"`) {
		t.Fatalf("got %d, Retry-After %q, %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
}

// An answer that cannot be encoded (a NaN score) is a 500 that says so, never a 200 cut short.
func TestAnswerThatCannotBeEncodedIsAnInternalError(t *testing.T) {
	w := httptest.NewRecorder()
	writeJSON(w, http.StatusOK, apiv1.SearchResponse{Results: []apiv1.SearchResult{{Score: math.NaN()}}})
	var e apiv1.Error
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || w.Code != http.StatusInternalServerError ||
		e.Error.Code != "internal" || !strings.Contains(e.Error.Message, "encode answer") {
		t.Fatalf("got %d %s (%v)", w.Code, w.Body, err)
	}
	if got := w.Header().Get("Content-Length"); got != fmt.Sprint(w.Body.Len()) {
		t.Fatalf("Content-Length %q for %d bytes", got, w.Body.Len())
	}
}
