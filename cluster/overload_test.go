package cluster

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/memcluster/memcluster/storage"
)

// A leader that refuses a forwarded proposal because its storage is overloaded answers 503 "overloaded"; the
// forwarding node hands that back as storage.ErrOverloaded — not proposed, so not an unknown outcome — and does
// not retry it at once.
func TestOverloadedLeaderRefusalCrossesTheWire(t *testing.T) {
	refused := fmt.Errorf("%w: level 0 holds 10 sublevels, writes are taken again at 8", storage.ErrOverloaded)
	re := toRPCError(refused, nil)
	w := httptest.NewRecorder()
	writeRPCError(w, re)
	if w.Code != http.StatusServiceUnavailable || re.Code != "overloaded" {
		t.Fatalf("leader answered %d %q, want 503 overloaded", w.Code, re.Code)
	}
	if retryable(re) {
		t.Fatal("an overloaded leader's refusal is retried at once")
	}
	err := mapOutcome(re)
	if !errors.Is(err, storage.ErrOverloaded) || errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("forwarding node got %v, want storage.ErrOverloaded", err)
	}
}
