package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/memcluster/memcluster/internal/tenant"
	"github.com/memcluster/memcluster/storage"
)

// FuzzRouteAuthorization is the differential test of the tenant gate: a request to any route of the table,
// with a mutated user, query and body, is sent with bob's writer token (users "bob" and "bob/*") to a real
// node holding alice's data. Whatever the bytes, the request either fails with 4xx or everything it touched
// is bob's: checked on the effects — alice's stored data (memories and every side space) and every other
// user's stay as they were, and a 2xx answer names no user bob may not access and carries none of alice's
// text. A 5xx is a failure too.
func FuzzRouteAuthorization(f *testing.F) {
	n := startTestNode(f, Options{Auth: testAuth(f)})
	seedAlice(f, n)
	routes := n.api.Routes()
	bob := testAuth(f).byHashOf(tokBobWriter).identity()
	for i, e := range routes {
		c := routeCases[e.Name]
		for _, u := range []string{"alice", "bob", "al%69ce", "bob%2F..%2Falice", "bob/x"} {
			p, body := c.req(u)
			path, query, _ := strings.Cut(p, "?")
			f.Add(uint8(i), path, query, body)
		}
	}
	for _, b := range adversarialBodies {
		for i, e := range routes {
			if e.Body != bodyNone {
				p, _ := routeCases[e.Name].req("bob")
				path, query, _ := strings.Cut(p, "?")
				f.Add(uint8(i), path, query, b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, route uint8, path, query, body string) {
		e := routes[int(route)%len(routes)]
		target := path
		if query != "" {
			target += "?" + query
		}
		r, err := http.NewRequest(e.Method, target, strings.NewReader(body))
		if err != nil || r.URL.Host != "" || !strings.HasPrefix(r.URL.Path, "/") {
			return // not a request a client could send to this node
		}
		r.Header.Set("Authorization", "Bearer "+tokBobWriter)
		before := foreignDigest(t, n, bob)
		w := httptest.NewRecorder()
		n.api.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", e.Method, target, body, w.Code, w.Body)
		}
		if w.Code < 300 {
			var v any
			_ = json.Unmarshal(w.Body.Bytes(), &v)
			if u, bad := foreignUser(v, bob); bad {
				t.Fatalf("%s %s %q: %d answered with user %q", e.Method, target, body, w.Code, u)
			}
			if strings.Contains(w.Body.String(), aliceSecret) {
				t.Fatalf("%s %s %q: %d answered with alice's memory", e.Method, target, body, w.Code)
			}
		}
		if after := foreignDigest(t, n, bob); after != before {
			t.Fatalf("%s %s %q: %d changed data of users bob's token may not access", e.Method, target, body, w.Code)
		}
	})
}

const aliceSecret = "vault code 4417"

// adversarialBodies are the shapes of body that two parsers read differently.
var adversarialBodies = []string{
	`{"user_id":"alice","text":"x"}}`, `{"user_id":"alice","text":"x"}]`, `{"user_id":"alice","text":"x"} {}`,
	`{"user_id":"bob","user_id":"alice","text":"x"}`, `{"user_id":"alice","user_id":"bob","text":"x"}`,
	`{"USER_ID":"alice","user_id":"bob","text":"x"}`, `{"User_Id":"alice","text":"x"}`,
	`{"user_\u0069d":"alice","text":"x"}`, `{"user_id":"\u0061lice","text":"x"}`, "\xef\xbb\xbf{\"user_id\":\"alice\",\"text\":\"x\"}",
	`{"memories":[{"user_id":"bob","text":"a"},{"user_id":"alice","text":"b"}]}`, `{"memories":[[{"user_id":"alice"}]]}`,
	`{"memories":[{"user_id":"bob","text":"a","user_id":"alice"}]}`, `[{"user_id":"alice","text":"x"}]`,
	`{"user_id":"alice","query":"vault","k":1e400}`, `{"user_id":"alice","query":"vault","k":99999999999999999999}`,
	` {"user_id":"alice","query":"vault code"} ` + "\n", `{"user_id":"alice\u0000","text":"x"}`, `{"user_id":null,"text":"x"}`,
	`{"query":"vault code","k":100,"min_score":0}`, `null`, `"alice"`, `{"text":"x","user_id":"alice"` + strings.Repeat(" ", 64) + `}x`,
}

// seedAlice stores a memory, a fact and a session for alice.
func seedAlice(t testing.TB, n *testNode) {
	for _, c := range []struct{ path, body string }{
		{"/v1/memories", `{"user_id":"alice","text":"` + aliceSecret + `"}`},
		{"/v1/users/alice/remember", `{"text":"I live in Oslo."}`},
		{"/v1/users/alice/sessions/r1/messages", `{"messages":[{"role":"user","text":"my ` + aliceSecret + `"}]}`},
	} {
		if w := serve(n.api, "POST", c.path, tokAdmin, c.body); w.Code >= 300 {
			t.Fatalf("seed %s: %d %s", c.path, w.Code, w.Body)
		}
	}
}

// foreignDigest is everything stored for the users id may not access: their memories and side records.
func foreignDigest(t testing.TB, n *testNode, id tenant.Identity) string {
	t.Helper()
	users := map[string]bool{}
	if err := n.db.Users(0, func(u string) bool { users[u] = true; return true }); err != nil {
		t.Fatal(err)
	}
	var side strings.Builder
	for _, space := range []byte{storage.SpaceFacts, storage.SpacePatterns, storage.SpaceHistory,
		storage.SpaceSessions, storage.SpaceSamples, storage.SpaceCold, storage.SpaceAccess, storage.SpaceWorkspace} {
		err := n.db.ScanSide(0, space, func(u, key string, v []byte) bool {
			if !id.Allows(u) {
				side.WriteString(string(space) + u + "/" + key + "=" + string(v) + ";")
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for u := range users {
		if !id.Allows(u) {
			names = append(names, u)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, u := range names {
		b.WriteString(u + ":" + userDigest(t, n, u) + "\n")
	}
	return b.String() + side.String()
}

// foreignUser finds a "user_id" in an answer that id may not access.
func foreignUser(v any, id tenant.Identity) (string, bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "user_id" && s != "" && !id.Allows(s) {
				return s, true
			}
			if u, bad := foreignUser(e, id); bad {
				return u, true
			}
		}
	case []any:
		for _, e := range x {
			if u, bad := foreignUser(e, id); bad {
				return u, true
			}
		}
	}
	return "", false
}
