package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
