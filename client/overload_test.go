package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
)

// overloadedFor answers the first n requests 503 overloaded with the Retry-After given, then 201 with the
// body it was sent (so a resent body is checked whole); it counts the requests.
func overloadedFor(n int32, retryAfter string, code string, calls *atomic.Int32) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if calls.Add(1) <= n {
			w.Header().Set("Retry-After", retryAfter)
			writeError(w, http.StatusServiceUnavailable, code, "level 0 holds 10 sublevels", "")
			return
		}
		if string(body) != `{"user_id":"u","text":"t"}` {
			writeError(w, http.StatusBadRequest, "invalid_argument", "resent body: "+string(body), "")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":"m1","user_id":"u","text":"t"}`))
	}
}

// A write refused as overloaded is sent again, whole, after Retry-After, up to the retries allowed.
func TestOverloadedWritesAreSentAgain(t *testing.T) {
	put := apiv1.PutRequest{UserID: "u", Text: "t"}
	for _, tc := range []struct {
		name      string
		refusals  int32
		opts      []Option
		wantCalls int32
		wantErr   bool
	}{
		{"two refusals, default retries", 2, nil, 3, false},
		{"more refusals than retries", 5, []Option{WithOverloadRetries(1)}, 2, true},
		{"no retries", 1, []Option{WithOverloadRetries(0)}, 1, true},
	} {
		var calls atomic.Int32
		c := newTestClient(t, overloadedFor(tc.refusals, "0", "overloaded", &calls), tc.opts...)
		m, err := c.Put(context.Background(), put)
		var ae *APIError
		if tc.wantErr != (err != nil) || calls.Load() != tc.wantCalls ||
			err != nil && !(errors.As(err, &ae) && ae.Code == "overloaded") || err == nil && m.ID != "m1" {
			t.Fatalf("%s: %v after %d requests (memory %q), want error %v after %d", tc.name, err, calls.Load(), m.ID,
				tc.wantErr, tc.wantCalls)
		}
	}
}

// Only the refusal before proposing is retried: a 503 for another reason (no leader) is returned as it is, and
// so is a refusal whose Retry-After would outlast the request's timeout.
func TestOnlyOverloadRefusalsAreRetriedInTime(t *testing.T) {
	var calls atomic.Int32
	c := newTestClient(t, overloadedFor(1, "0", "unavailable", &calls))
	if _, err := c.Put(context.Background(), apiv1.PutRequest{UserID: "u", Text: "t"}); err == nil || calls.Load() != 1 {
		t.Fatalf("503 unavailable: %v after %d requests, want it returned after 1", err, calls.Load())
	}
	calls.Store(0)
	c = newTestClient(t, overloadedFor(1, "5", "overloaded", &calls), WithTimeout(time.Second))
	start := time.Now()
	if _, err := c.Put(context.Background(), apiv1.PutRequest{UserID: "u", Text: "t"}); err == nil || calls.Load() != 1 {
		t.Fatalf("Retry-After past the timeout: %v after %d requests, want the refusal after 1", err, calls.Load())
	}
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Fatalf("the refusal came back after %s: the client waited for a retry it could not make", d)
	}
}

// New refuses a negative count of retries.
func TestOverloadRetriesNegative(t *testing.T) {
	if _, err := New("127.0.0.1:1", WithOverloadRetries(-1)); err == nil {
		t.Fatal("New took -1 overload retries")
	}
}
