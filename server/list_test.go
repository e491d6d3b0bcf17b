package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/memcluster/memcluster/apiv1"
)

// TestListFiltersAndRefusals: the listing route applies its query filters and pages with its cursor, and
// answers a clear 400 naming the parameter for a bad type, time, limit or cursor.
func TestListFiltersAndRefusals(t *testing.T) {
	n := startTestNode(t, Options{})
	for _, body := range []string{
		`{"user_id":"dora","agent_id":"a1","tags":["x","y"],"text":"one","occurred_at":"2026-01-01T00:00:00Z"}`,
		`{"user_id":"dora","agent_id":"a2","tags":["x"],"text":"two","occurred_at":"2026-02-01T00:00:00Z"}`,
		`{"user_id":"dora","type":"semantic","tags":["x","y"],"text":"three","occurred_at":"2026-03-01T00:00:00Z"}`,
	} {
		if w := serve(n.api, "POST", "/v1/memories", "", body); w.Code != http.StatusCreated {
			t.Fatalf("put: %d %s", w.Code, w.Body)
		}
	}
	list := func(q string) (texts []string, next string) {
		t.Helper()
		w := serve(n.api, "GET", "/v1/users/dora/memories?"+q, "", "")
		var resp apiv1.ListResponse
		if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &resp) != nil {
			t.Fatalf("%s: %d %s", q, w.Code, w.Body)
		}
		for _, m := range resp.Memories {
			texts = append(texts, m.Text)
		}
		return texts, resp.NextCursor
	}
	for q, want := range map[string]string{
		"":              "one two three",
		"type=episodic": "one two",
		"agent_id=a2":   "two",
		"tag=x&tag=y":   "one three",
		"from=2026-01-15T00:00:00Z&to=2026-03-01T00:00:00Z": "two",
		"type=semantic&type=episodic&tag=y":                 "one three",
	} {
		if got, _ := list(q); strings.Join(got, " ") != want {
			t.Errorf("%q: %v, want %s", q, got, want)
		}
	}
	first, next := list("limit=2")
	rest, last := list("limit=2&cursor=" + next)
	if strings.Join(append(first, rest...), " ") != "one two three" || last != "" {
		t.Errorf("pages: %v then %v (next %q)", first, rest, last)
	}
	for q, field := range map[string]string{"type=dream": "type", "from=yesterday": "from", "limit=0": "limit",
		"limit=1001": "limit", "cursor=%25%25": "cursor"} {
		w := serve(n.api, "GET", "/v1/users/dora/memories?"+q, "", "")
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"field":"`+field+`"`) {
			t.Errorf("%s: %d %s", q, w.Code, w.Body)
		}
	}
}

// TestImportRefusesBadItems: an import names the item and field at fault and writes nothing of the request;
// a valid one imported twice reports everything unchanged the second time.
func TestImportRefusesBadItems(t *testing.T) {
	n := startTestNode(t, Options{})
	mem := `{"id":"` + anID + `","user_id":"%s","type":"episodic","text":"kept","occurred_at":"2026-01-01T00:00:00Z","created_at":"2026-01-01T00:00:00Z","importance":0.5}`
	good := `{"memories":[` + strings.Replace(mem, "%s", "erin", 1) + `],"records":[{"kind":"session","key":"r1","value":{"session":{"id":"r1"}}}]}`
	for body, field := range map[string]string{
		`{"memories":[` + strings.Replace(mem, "%s", "frank", 1) + `]}`:                     "memories[0].user_id",
		`{"records":[{"kind":"fact","key":"F1","value":{"statement":"x","colour":"red"}}]}`: "records[0].value",
		`{"records":[{"kind":"gossip","key":"k","value":{}}]}`:                              "records[0].kind",
		`{"records":[{"kind":"cold","key":"k","value":"AAAA"}]}`:                            "records[0].value",
	} {
		w := serve(n.api, "POST", "/v1/users/erin/import", "", body)
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"field":"`+field+`"`) {
			t.Errorf("%s: %d %s", body, w.Code, w.Body)
		}
	}
	for i, want := range []string{`"created":1`, `"unchanged":1`} {
		w := serve(n.api, "POST", "/v1/users/erin/import", "", good)
		if w.Code != http.StatusOK || strings.Count(w.Body.String(), want) != 2 {
			t.Errorf("import %d: %d %s", i+1, w.Code, w.Body)
		}
	}
}
