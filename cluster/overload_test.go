package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/memcluster/memcluster/storage"
)

// A leader that refuses a forwarded proposal because its storage is overloaded answers 503 "overloaded"; the
// forwarding node, decoding the answer as its calls do, hands that back as storage.ErrOverloaded — not
// proposed, so not an unknown outcome — and does not retry it at once.
func TestOverloadedLeaderRefusalCrossesTheWire(t *testing.T) {
	refused := fmt.Errorf("%w: level 0 holds 10 sublevels, writes are taken again at 8", storage.ErrOverloaded)
	w := httptest.NewRecorder()
	writeRPCError(w, toRPCError(refused, nil))
	var re rpcError
	if err := json.NewDecoder(w.Body).Decode(&re); err != nil {
		t.Fatal(err)
	}
	if w.Code != http.StatusServiceUnavailable || re.Code != "overloaded" {
		t.Fatalf("leader answered %d %q, want 503 overloaded", w.Code, re.Code)
	}
	if retryable(&re) {
		t.Fatal("an overloaded leader's refusal is retried at once")
	}
	err := mapOutcome(&re)
	if !errors.Is(err, storage.ErrOverloaded) || errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("forwarding node got %v, want storage.ErrOverloaded", err)
	}
}

// A refusal as overloaded after an attempt that may have reached a leader's log (a leadership lost while it
// applied, a call cut off after it was sent) is an unknown outcome: the client must not send it again as new.
func TestOverloadAfterAReachedAttemptIsUnknown(t *testing.T) {
	refused := fmt.Errorf("%w: writes stalled", storage.ErrOverloaded)
	if err := refusedAfterReaching(refused, false); !errors.Is(err, storage.ErrOverloaded) || errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("first attempt refused: %v, want storage.ErrOverloaded", err)
	}
	if err := refusedAfterReaching(refused, true); !errors.Is(err, ErrOutcomeUnknown) || errors.Is(err, storage.ErrOverloaded) {
		t.Fatalf("refused after a reached attempt: %v, want ErrOutcomeUnknown only", err)
	}
	if err := refusedAfterReaching(ErrNoLeader, true); !errors.Is(err, ErrNoLeader) {
		t.Fatalf("another error changed: %v", err)
	}
	if !hasCode(&rpcError{Code: "not_leader"}, "not_leader") || hasCode(ErrNotLeader, "not_leader") {
		t.Fatal("hasCode does not tell a remote answer from a local error")
	}
}
