package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
)

// TestBadInputGetsNamedErrors sends the list of bad requests over real HTTP to a real node: each gets a
// 4xx JSON error whose message names the problem, nothing is stored, and the node keeps serving.
func TestBadInputGetsNamedErrors(t *testing.T) {
	needProcesses(t)
	p := newProc(t, "dev")
	p.start("--dev", "--max-body-bytes", "65536")
	ctx := context.Background()
	waitFor(t, 30*time.Second, "a ready node", func() bool { return p.client(t).Ready(ctx) == nil })
	base := "http://" + p.http
	cases := []struct {
		name, method, path, body string
		status                   int
		field, mention           string
	}{
		{"missing user", "POST", "/v1/memories", `{"text":"hi"}`, 400, "user_id", "required"},
		{"empty text", "POST", "/v1/memories", `{"user_id":"zed","text":""}`, 400, "text", "empty"},
		{"oversized text", "POST", "/v1/memories", `{"user_id":"zed","text":"` + strings.Repeat("a", 40000) + `"}`, 400, "text", "longer"},
		{"invalid utf-8", "POST", "/v1/memories", "{\"user_id\":\"zed\",\"text\":\"\xff\xfe\"}", 400, "", "UTF-8"},
		{"unknown type", "POST", "/v1/memories", `{"user_id":"zed","text":"hi","type":"dream"}`, 400, "type", "dream"},
		{"malformed time", "POST", "/v1/memories", `{"user_id":"zed","text":"hi","occurred_at":"yesterday"}`, 400, "occurred_at", "RFC 3339"},
		{"unknown field", "POST", "/v1/memories", `{"user_id":"zed","text":"hi","colour":"red"}`, 400, "colour", "unknown field"},
		{"wrong type", "POST", "/v1/memories", `{"user_id":"zed","text":42}`, 400, "text", "string"},
		{"importance range", "POST", "/v1/memories", `{"user_id":"zed","text":"hi","importance":3}`, 400, "importance", "between"},
		{"body over limit", "POST", "/v1/memories", `{"user_id":"zed","text":"` + strings.Repeat("a", 70000) + `"}`, 413, "", "larger"},
		{"malformed json", "POST", "/v1/memories", `{"user_id":`, 400, "", "JSON"},
		{"k too large", "POST", "/v1/search", `{"user_id":"zed","query":"hi","k":5000}`, 400, "k", "1000"},
		{"k negative", "POST", "/v1/search", `{"user_id":"zed","query":"hi","k":-1}`, 400, "k", "between"},
		{"empty query", "POST", "/v1/search", `{"user_id":"zed","query":""}`, 400, "query", "empty"},
		{"bad search time", "POST", "/v1/search", `{"user_id":"zed","query":"hi","from":"soon"}`, 400, "from", "RFC 3339"},
		{"bad half-life", "POST", "/v1/search", `{"user_id":"zed","query":"hi","recency_half_life":"often"}`, 400, "recency_half_life", "duration"},
		{"get without user", "GET", "/v1/memories/01ARZ3NDEKTSV4RRFFQ69G5FAV", "", 400, "user_id", "required"},
		{"get bad id", "GET", "/v1/memories/not-an-id?user_id=zed", "", 400, "id", "not a memory id"},
		{"get missing", "GET", "/v1/memories/01ARZ3NDEKTSV4RRFFQ69G5FAV?user_id=zed", "", 404, "", "not found"},
		{"delete missing", "DELETE", "/v1/memories/01ARZ3NDEKTSV4RRFFQ69G5FAV?user_id=zed", "", 404, "id", "not found"},
		{"no route", "GET", "/v2/nothing", "", 404, "", "no route"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			var e apiv1.Error
			if resp.StatusCode != tc.status || json.Unmarshal(b, &e) != nil || e.Error.Code == "" {
				t.Fatalf("status %d body %s; want %d and a JSON error", resp.StatusCode, b, tc.status)
			}
			if e.Error.Field != tc.field || !strings.Contains(e.Error.Message, tc.mention) {
				t.Fatalf("error %+v; want field %q and a message mentioning %q", e.Error, tc.field, tc.mention)
			}
		})
	}
	// Nothing was half-written: user zed has no memories at all.
	zero := 0.0
	res, err := p.client(t).Search(ctx, apiv1.SearchRequest{UserID: "zed", Query: "hi a red dream", MinScore: &zero})
	if err != nil || len(res.Results) != 0 {
		t.Fatalf("user zed has %d memories after rejected writes (%v)", len(res.Results), err)
	}
	if _, err := p.client(t).Put(ctx, apiv1.PutRequest{UserID: "zed", Text: "still serving"}); err != nil {
		t.Fatalf("node stopped serving after bad input: %v", err)
	}
}
