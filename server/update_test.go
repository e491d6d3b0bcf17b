package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
)

// TestUpdateInPlace: a PATCH replaces the fields it gives, re-embeds a new text (search finds the new words),
// records an UPDATE in the memory's history, refuses an empty change and a foreign user, and answers 404 for a
// memory that is gone.
func TestUpdateInPlace(t *testing.T) {
	n := startTestNode(t, Options{Auth: testAuth(t)})
	w := serve(n.api, "POST", "/v1/memories", tokBobWriter, `{"user_id":"bob","text":"I drive a red bicycle","tags":["a"]}`)
	if w.Code != http.StatusCreated {
		t.Fatalf("put: %d %s", w.Code, w.Body)
	}
	var m memory.Memory
	_ = json.Unmarshal(w.Body.Bytes(), &m)
	path := "/v1/memories/" + m.ID + "?user_id=bob"

	w = serve(n.api, "PATCH", path, tokBobWriter, `{"text":"I ride a green tandem","tags":[],"importance":0.9}`)
	if w.Code != http.StatusOK {
		t.Fatalf("patch: %d %s", w.Code, w.Body)
	}
	var got memory.Memory
	_ = json.Unmarshal(w.Body.Bytes(), &got)
	if got.ID != m.ID || got.Text != "I ride a green tandem" || len(got.Tags) != 0 || got.Importance != 0.9 {
		t.Fatalf("updated = %+v", got)
	}
	w = serve(n.api, "POST", "/v1/search", tokBobReader, `{"user_id":"bob","query":"green tandem","min_score":0}`)
	var sr apiv1.SearchResponse
	_ = json.Unmarshal(w.Body.Bytes(), &sr)
	if len(sr.Results) != 1 || sr.Results[0].Text != "I ride a green tandem" {
		t.Fatalf("search after update: %s", w.Body)
	}
	w = serve(n.api, "GET", "/v1/users/bob/history?memory_id="+m.ID, tokBobReader, "")
	if !strings.Contains(w.Body.String(), `"UPDATE"`) || !strings.Contains(w.Body.String(), "red bicycle") {
		t.Fatalf("history: %s", w.Body)
	}
	for _, tc := range []struct {
		path, token, body string
		code              int
	}{
		{path, tokBobWriter, `{}`, http.StatusBadRequest},
		{path, tokBobWriter, `{"importance":2}`, http.StatusBadRequest},
		{path, tokBobReader, `{"text":"x"}`, http.StatusForbidden},
		{"/v1/memories/" + m.ID + "?user_id=alice", tokBobWriter, `{"text":"x"}`, http.StatusForbidden},
		{"/v1/memories/" + anID + "?user_id=bob", tokBobWriter, `{"text":"x"}`, http.StatusNotFound},
	} {
		if w := serve(n.api, "PATCH", tc.path, tc.token, tc.body); w.Code != tc.code || !strings.Contains(w.Body.String(), `"error"`) {
			t.Errorf("PATCH %s %s: %d %s, want %d", tc.path, tc.body, w.Code, w.Body, tc.code)
		}
	}
}
