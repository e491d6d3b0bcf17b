package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/memcluster/memcluster/apiv1"
)

// TestSearchNowAnchorsRelativeTime: "last week" in a search means the week before the request's now, so the
// same question asked at two dates finds the memory of the week before each; a zero or malformed now is a
// 400 naming the field.
func TestSearchNowAnchorsRelativeTime(t *testing.T) {
	n := startTestNode(t, Options{Auth: testAuth(t)})
	for _, b := range []string{
		`{"user_id":"bob","text":"I finished reading a novel about whales","occurred_at":"2023-01-31T10:00:00Z"}`,
		`{"user_id":"bob","text":"I finished reading a novel about ships","occurred_at":"2023-03-08T10:00:00Z"}`,
	} {
		if w := serve(n.api, "POST", "/v1/memories", tokBobWriter, b); w.Code != http.StatusCreated {
			t.Fatalf("put: %d %s", w.Code, w.Body)
		}
	}
	for now, want := range map[string]string{"2023-02-07T09:00:00Z": "whales", "2023-03-14T09:00:00Z": "ships"} {
		w := serve(n.api, "POST", "/v1/search", tokBobReader,
			`{"user_id":"bob","query":"which novel did I finish reading last week","min_score":0,"now":"`+now+`"}`)
		var sr apiv1.SearchResponse
		if err := json.Unmarshal(w.Body.Bytes(), &sr); err != nil || w.Code != http.StatusOK || len(sr.Results) == 0 {
			t.Fatalf("search at %s: %d %s", now, w.Code, w.Body)
		}
		if !strings.Contains(sr.Results[0].Text, want) {
			t.Errorf("asked at %s: first %q, want the one about %s", now, sr.Results[0].Text, want)
		}
	}
	for _, bad := range []string{`"last week"`, `"0001-01-01T00:00:00Z"`} {
		w := serve(n.api, "POST", "/v1/search", tokBobReader, `{"user_id":"bob","query":"novel","now":`+bad+`}`)
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "now") {
			t.Errorf("now %s: %d %s, want a 400 naming now", bad, w.Code, w.Body)
		}
	}
}
