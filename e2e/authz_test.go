package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/internal/tenant"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// checkMalformedBodies sends, through every node (two of three forward to the shard's leader), the bodies that
// once slipped past the tenant gate — a byte after the JSON value, duplicate or differently cased keys, a
// batch that smuggles another tenant's user — with an acme token naming zeta-1. Each is refused with 400 or
// 403 and zeta-1's memories stay as they were.
func checkMalformedBodies(t *testing.T, procs []*proc) {
	t.Helper()
	before := zetaMemories(t, procs[0])
	attacks := []struct{ tok, path, body string }{
		{tokAcmeReader, "/v1/search", `{"user_id":"zeta-1","query":"hello"}}`},
		{tokAcmeWriter, "/v1/memories", `{"user_id":"zeta-1","text":"INJECTED"}}`},
		{tokAcmeWriter, "/v1/memories", `{"user_id":"zeta-1","text":"INJECTED"}]`},
		{tokAcmeWriter, "/v1/memories/batch", `{"memories":[{"user_id":"zeta-1","text":"INJECTED"}]}}`},
		{tokAcmeWriter, "/v1/memories", `{"user_id":"acme-1","user_id":"zeta-1","text":"INJECTED"}`},
		{tokAcmeWriter, "/v1/memories", `{"user_id":"acme-1","USER_ID":"zeta-1","text":"INJECTED"}`},
		{tokAcmeWriter, "/v1/memories/batch", `{"memories":[{"user_id":"acme-1","text":"a"},{"user_id":"zeta-1","text":"INJECTED"}]}`},
	}
	for i, p := range procs {
		for _, a := range attacks {
			code, body := do(t, p.http, a.tok, apiCall{"POST", a.path, a.body})
			if code != 400 && code != 403 {
				t.Errorf("node %d: %s %s: %d %s, want 400 or 403", i, a.path, a.body, code, body)
			}
			if strings.Contains(body, "hello from zeta-1") {
				t.Errorf("node %d: %s %s: zeta-1's memory came back", i, a.path, a.body)
			}
		}
	}
	if after := zetaMemories(t, procs[0]); after != before {
		t.Errorf("zeta-1's memories changed: %s -> %s", before, after)
	}
}

// zetaMemories lists zeta-1's memories as the admin sees them.
func zetaMemories(t *testing.T, p *proc) string {
	t.Helper()
	code, body := do(t, p.http, tokAdmin, apiCall{"POST", "/v1/search", `{"user_id":"zeta-1","query":"hello INJECTED","min_score":0,"k":1000}`})
	var res struct {
		Results []struct{ ID, Text string }
	}
	if code != 200 || json.Unmarshal([]byte(body), &res) != nil {
		t.Fatalf("admin search of zeta-1: %d %s", code, body)
	}
	var out []string
	for _, r := range res.Results {
		out = append(out, r.ID+"="+r.Text)
	}
	return strings.Join(out, ",")
}

// checkForwardedIdentity calls the internal API as a forwarding node would, with the cluster token and the
// identity of an acme token, and proposes a put for zeta-1 on every shard of every node: each node refuses it
// (403) instead of widening the identity it was handed.
func checkForwardedIdentity(t *testing.T, procs []*proc, shards int) {
	t.Helper()
	now := time.Now().UTC()
	cmd, err := storage.EncodePut([]memory.Memory{{ID: "01JD0000000000000000000000", UserID: "zeta-1",
		Type: memory.Episodic, Text: "INJECTED", OccurredAt: now, CreatedAt: now, Importance: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	acme := tenant.Identity{Name: "writer:acme", Users: []string{"acme-*"}}.Encode()
	for i, p := range procs {
		for s := 0; s < shards; s++ {
			req, _ := http.NewRequest("POST", fmt.Sprintf("http://%s/internal/v1/shards/%d/propose", p.http, s),
				strings.NewReader(string(cmd)))
			req.Header.Set("Authorization", "Bearer "+tokCluster)
			req.Header.Set(tenant.Header, acme)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("node %d shard %d: a forwarded put for zeta-1 with an acme identity: %d, want 403", i, s, resp.StatusCode)
			}
		}
	}
}

// checkPprofNeedsAdmin: with --pprof and authentication, profiles answer only to an admin token.
func checkPprofNeedsAdmin(t *testing.T, p *proc) {
	t.Helper()
	for tok, want := range map[string]int{"": 401, tokAcmeWriter: 403, tokAdmin: 200} {
		if code, _ := do(t, p.http, tok, apiCall{"GET", "/debug/pprof/heap", ""}); code != want {
			t.Errorf("GET /debug/pprof/heap with token %q: %d, want %d", tok, code, want)
		}
	}
}
