package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/memcluster/memcluster/apiv1"
)

// FuzzDecodeBody: any request body either decodes into each API request type or is answered with a 4xx JSON
// error; nothing panics.
func FuzzDecodeBody(f *testing.F) {
	for _, s := range []string{`{"user_id":"u","text":"hi"}`, `{"user_id":"u","query":"x","k":3}`,
		`{"messages":[{"role":"user","text":"I live in Oslo."}]}`, `{"signal":"steps","samples":[{"value":1}]}`,
		`{"occurred_at":"not a time"}`, "\xff\xfe", `{"a":1}{"b":2}`, `[]`, ``} {
		f.Add(s)
	}
	targets := []func() any{
		func() any { return &apiv1.PutRequest{} }, func() any { return &apiv1.SearchRequest{} },
		func() any { return &apiv1.AppendRequest{} }, func() any { return &apiv1.SignalsRequest{} },
		func() any { return &apiv1.ContextRequest{} },
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, newT := range targets {
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodPost, "/v1/x", strings.NewReader(body))
			if !decodeBody(w, r, bodyRequired, newT()) && (w.Code < 400 || w.Code > 499 ||
				!strings.Contains(w.Body.String(), `"error"`)) {
				t.Fatalf("body %q: rejected with %d %s", body, w.Code, w.Body)
			}
		}
	})
}
