package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/internal/tenant"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/retrieval"
	"github.com/memcluster/memcluster/storage"
)

// routeCase builds one request of a route naming user u, and says where it names it.
type routeCase struct {
	from userFrom
	req  func(u string) (path, body string)
}

const anID = "01JD0000000000000000000000"

// routeCases has one entry per route of the table. TestEveryRouteAuthorizes fails for a route without one,
// so a new route cannot go in untested.
var routeCases = map[string]routeCase{
	"put": {userBody, func(u string) (string, string) {
		return "/v1/memories", `{"user_id":"` + u + `","text":"hello"}`
	}},
	"put_batch": {userBody, func(u string) (string, string) {
		return "/v1/memories/batch", `{"memories":[{"user_id":"` + u + `","text":"a"}]}`
	}},
	"get":    {userQuery, func(u string) (string, string) { return "/v1/memories/" + anID + "?user_id=" + u, "" }},
	"delete": {userQuery, func(u string) (string, string) { return "/v1/memories/" + anID + "?user_id=" + u, "" }},
	"update": {userQuery, func(u string) (string, string) {
		return "/v1/memories/" + anID + "?user_id=" + u, `{"text":"hello"}`
	}},
	"search": {userBody, func(u string) (string, string) {
		return "/v1/search", `{"user_id":"` + u + `","query":"hello"}`
	}},
	"forget":      {userPath, func(u string) (string, string) { return "/v1/users/" + u, "" }},
	"status":      {userNone, func(string) (string, string) { return "/v1/cluster/status", "" }},
	"session_get": {userPath, func(u string) (string, string) { return "/v1/users/" + u + "/sessions/r1", "" }},
	"session_append": {userPath, func(u string) (string, string) {
		return "/v1/users/" + u + "/sessions/r1/messages", `{"messages":[{"role":"user","text":"hi"}]}`
	}},
	"session_flush": {userPath, func(u string) (string, string) { return "/v1/users/" + u + "/sessions/r1/flush", `{}` }},
	"session_end":   {userPath, func(u string) (string, string) { return "/v1/users/" + u + "/sessions/r1/end", `{}` }},
	"remember":      {userPath, func(u string) (string, string) { return "/v1/users/" + u + "/remember", `{"text":"I like tea."}` }},
	"facts":         {userPath, func(u string) (string, string) { return "/v1/users/" + u + "/facts", "" }},
	"history":       {userPath, func(u string) (string, string) { return "/v1/users/" + u + "/history", "" }},
	"signals": {userPath, func(u string) (string, string) {
		return "/v1/users/" + u + "/signals", `{"signal":"steps","samples":[{"value":1}]}`
	}},
	"aggregates":  {userPath, func(u string) (string, string) { return "/v1/users/" + u + "/signals/steps/daily", "" }},
	"consolidate": {userPath, func(u string) (string, string) { return "/v1/users/" + u + "/consolidate", `{}` }},
	"pattern_correct": {userPath, func(u string) (string, string) {
		return "/v1/users/" + u + "/patterns/correct", `{"key":"k"}`
	}},
	"graph":       {userPath, func(u string) (string, string) { return "/v1/users/" + u + "/graph?concept=tea", "" }},
	"context":     {userPath, func(u string) (string, string) { return "/v1/users/" + u + "/context", `{"query":"tea"}` }},
	"tier_run":    {userBody, func(u string) (string, string) { return "/v1/tier/run", `{"user_id":"` + u + `"}` }},
	"tier_status": {userQuery, func(u string) (string, string) { return "/v1/tier/status?user_id=" + u, "" }},
	"list":        {userPath, func(u string) (string, string) { return "/v1/users/" + u + "/memories?type=semantic", "" }},
	"records":     {userPath, func(u string) (string, string) { return "/v1/users/" + u + "/records/fact", "" }},
	"import": {userPath, func(u string) (string, string) {
		return "/v1/users/" + u + "/import", `{"records":[{"kind":"pattern","key":"k","value":{"key":"k"}}]}`
	}},
	"users": {userNone, func(string) (string, string) { return "/v1/users", "" }},

	// OpenClaw workspaces.
	"workspace_get": {userPath, func(u string) (string, string) { return "/v1/users/" + u + "/workspace", "" }},
	"workspace_put": {userPath, func(u string) (string, string) {
		return "/v1/users/" + u + "/workspace/files", `{"path":"memory/a.md","size":0,"chunk":{"tokens":400,"overlap":80},` +
			`"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","chunks":[]}`
	}},
	"workspace_delete": {userPath, func(u string) (string, string) {
		return "/v1/users/" + u + "/workspace/files?path=memory/a.md", ""
	}},
	"workspace_lines": {userPath, func(u string) (string, string) {
		return "/v1/users/" + u + "/workspace/lines?path=MEMORY.md", ""
	}},
	"workspace_search": {userPath, func(u string) (string, string) {
		return "/v1/users/" + u + "/workspace/search", `{"query":"tea"}`
	}},

	// Operator routes: no tenant data.
	"node_list":       {userNone, func(string) (string, string) { return "/v1/nodes", "" }},
	"shard_list":      {userNone, func(string) (string, string) { return "/v1/shards", "" }},
	"node_drain":      {userNone, func(string) (string, string) { return "/v1/nodes/nx/drain", "" }},
	"node_undrain":    {userNone, func(string) (string, string) { return "/v1/nodes/nx/drain", "" }},
	"node_remove":     {userNone, func(string) (string, string) { return "/v1/nodes/nx", "" }},
	"transfer_leader": {userNone, func(string) (string, string) { return "/v1/shards/0/transfer-leader", `{"to":"n1"}` }},
	"shard_split":     {userNone, func(string) (string, string) { return "/v1/shards/0/split", `{"wait":false}` }},
	"rebalance":       {userNone, func(string) (string, string) { return "/v1/cluster/rebalance", `{"paused":false}` }},
	"backup":          {userNone, func(string) (string, string) { return "/v1/backup", "" }},
	"restore":         {userNone, func(string) (string, string) { return "/v1/backup/restore", "not a backup" }},
}

func serve(h http.Handler, method, path, token, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// unusedMethod is a method no route serves on path.
func unusedMethod(routes []endpoint, path string) string {
	for _, m := range []string{"PUT", "PATCH", "DELETE", "POST", "GET"} {
		used := false
		for _, r := range routes {
			used = used || (r.Path == path && r.Method == m)
		}
		if !used {
			return m
		}
	}
	return "OPTIONS"
}

// TestEveryRouteAuthorizes walks the route table itself: every route refuses a request without a token (401),
// one naming a user the token may not access (403 or 404), a write with a reader token (403) and a body with a
// byte after its JSON value (400); it names its user where the table says; a request for the token's own user
// passes the gate; another method on its path is 405 with an Allow header.
func TestEveryRouteAuthorizes(t *testing.T) {
	n := startTestNode(t, Options{Auth: testAuth(t)})
	for _, e := range n.api.Routes() {
		t.Run(e.Name, func(t *testing.T) {
			tc, ok := routeCases[e.Name]
			if !ok {
				t.Fatalf("route %s %s has no case in routeCases", e.Method, e.Path)
			}
			if tc.from != e.User {
				t.Errorf("the table says the user comes from %q, the case from %q", e.User, tc.from)
			}
			path, body := tc.req("bob")
			if w := serve(n.api, e.Method, path, "", body); w.Code != http.StatusUnauthorized {
				t.Errorf("no token: %d %s", w.Code, w.Body)
			}
			if e.Role >= RoleWriter {
				if w := serve(n.api, e.Method, path, tokBobReader, body); w.Code != http.StatusForbidden {
					t.Errorf("reader token writing: %d %s", w.Code, w.Body)
				}
			}
			if e.Role == RoleAdmin {
				if w := serve(n.api, e.Method, path, tokBobWriter, body); w.Code != http.StatusForbidden {
					t.Errorf("writer token on an admin route: %d %s", w.Code, w.Body)
				}
			}
			own := tokBobWriter
			if e.Role == RoleAdmin {
				own = tokAdmin
			} else if tc.from != userNone {
				p, b := tc.req("alice")
				if w := serve(n.api, e.Method, p, tokBobWriter, b); w.Code != http.StatusForbidden && w.Code != http.StatusNotFound {
					t.Errorf("bob's token naming alice: %d %s", w.Code, w.Body)
				}
			}
			if w := serve(n.api, e.Method, path, own, body); w.Code == http.StatusUnauthorized || w.Code == http.StatusForbidden {
				t.Errorf("own user: %d %s", w.Code, w.Body)
			}
			if body != "" {
				if w := serve(n.api, e.Method, path, own, body+"}"); w.Code != http.StatusBadRequest {
					t.Errorf("trailing byte: %d %s", w.Code, w.Body)
				}
			}
			other := unusedMethod(n.api.Routes(), e.Path)
			if w := serve(n.api, other, path, own, body); w.Code != http.StatusMethodNotAllowed ||
				!strings.Contains(w.Header().Get("Allow"), e.Method) {
				t.Errorf("%s: %d Allow=%q", other, w.Code, w.Header().Get("Allow"))
			}
		})
	}
}

// The bypass that two parsers made: a user-bound token reached another user's memories by adding one byte
// after the JSON body. Each request is refused, and alice's data is unchanged.
func TestTrailingBytesCannotReachAnotherUser(t *testing.T) {
	n := startTestNode(t, Options{Auth: testAuth(t)})
	if w := serve(n.api, "POST", "/v1/memories", tokAdmin, `{"user_id":"alice","text":"vault code 4417"}`); w.Code != http.StatusCreated {
		t.Fatalf("seed alice: %d %s", w.Code, w.Body)
	}
	before := userDigest(t, n, "alice")
	for _, c := range []struct{ tok, path, body string }{
		{tokBobReader, "/v1/search", `{"user_id":"alice","query":"vault code"}}`},
		{tokBobWriter, "/v1/memories", `{"user_id":"alice","text":"INJECTED"}}`},
		{tokBobWriter, "/v1/memories", `{"user_id":"alice","text":"INJECTED"}]`},
		{tokBobWriter, "/v1/memories/batch", `{"memories":[{"user_id":"alice","text":"x"}]}}`},
		{tokBobWriter, "/v1/memories", `{"user_id":"bob","user_id":"alice","text":"INJECTED"}`},
		{tokBobWriter, "/v1/memories", `{"user_id":"bob","USER_ID":"alice","text":"INJECTED"}`},
		{tokBobWriter, "/v1/memories/batch", `{"memories":[{"user_id":"bob","text":"a"},{"user_id":"alice","text":"b"}]}`},
		{tokBobReader, "/v1/search", `{"user_id":"alice","query":"vault code"}`},
	} {
		w := serve(n.api, "POST", c.path, c.tok, c.body)
		if w.Code != http.StatusBadRequest && w.Code != http.StatusForbidden {
			t.Errorf("%s %s: %d %s", c.path, c.body, w.Code, w.Body)
		}
		if strings.Contains(w.Body.String(), "4417") {
			t.Errorf("%s %s: alice's memory came back", c.path, c.body)
		}
	}
	if after := userDigest(t, n, "alice"); after != before {
		t.Errorf("alice's data changed:\n%s\n%s", before, after)
	}
}

// userDigest is everything stored for user: memories and every side space, with the user's revision.
func userDigest(t testing.TB, n *testNode, user string) string {
	t.Helper()
	ms, err := n.db.Recent(0, user, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, m := range ms {
		b.WriteString(m.ID + ":" + m.Text + ";")
	}
	for _, space := range []byte{storage.SpaceFacts, storage.SpacePatterns, storage.SpaceHistory,
		storage.SpaceSessions, storage.SpaceSamples, storage.SpaceCold, storage.SpaceAccess, storage.SpaceWorkspace} {
		rd, err := n.db.ReadSide(0, space, user, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(rd)
		b.Write(js)
	}
	return b.String()
}

func TestPprofNeedsAdmin(t *testing.T) {
	n := startTestNode(t, Options{Auth: testAuth(t), Pprof: true})
	for tok, want := range map[string]int{"": 401, tokBobWriter: 403, tokAdmin: 200} {
		if w := serve(n.api, "GET", "/debug/pprof/heap", tok, ""); w.Code != want {
			t.Errorf("pprof heap with %q: %d, want %d", tok, w.Code, want)
		}
	}
}

func TestUnknownMethodAndPath(t *testing.T) {
	n := startTestNode(t, Options{})
	w := serve(n.api, "PUT", "/v1/memories", "", `{}`)
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "POST" || !strings.Contains(w.Body.String(), `"method_not_allowed"`) {
		t.Errorf("PUT /v1/memories: %d Allow=%q %s", w.Code, w.Header().Get("Allow"), w.Body)
	}
	if w := serve(n.api, "GET", "/v1/nothing", "", ""); w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), `"not_found"`) {
		t.Errorf("unknown path: %d %s", w.Code, w.Body)
	}
	if w := serve(n.api, "POST", "/v1/users/bob/consolidate", "", `{"x":1}`); w.Code != http.StatusBadRequest {
		t.Errorf("consolidate with an unknown field: %d %s", w.Code, w.Body)
	}
	r := httptest.NewRequest("POST", "/v1/memories", strings.NewReader(`{"user_id":"bob","text":"x"}`))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w = httptest.NewRecorder()
	n.api.ServeHTTP(w, r)
	if w.Code != http.StatusUnsupportedMediaType {
		t.Errorf("form content type: %d %s", w.Code, w.Body)
	}
}

// The shard is a second line: a command or read for a user outside the identity the request carries is
// refused there too, whatever the door decided.
func TestShardRefusesOutsideIdentity(t *testing.T) {
	n := startTestNode(t, Options{})
	ctx := tenant.With(context.Background(), testAuth(t).byHashOf(tokBobWriter).identity())
	cmd, err := storage.EncodePut([]memory.Memory{{ID: anID, UserID: "alice", Type: memory.Episodic, Text: "x",
		OccurredAt: time.Now(), CreatedAt: time.Now(), Importance: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.node.Propose(ctx, 0, cmd); !errors.Is(err, tenant.ErrForbidden) {
		t.Errorf("propose for alice as bob: %v", err)
	}
	if _, err := n.node.Get(ctx, 0, "alice", anID, false); !errors.Is(err, tenant.ErrForbidden) {
		t.Errorf("get alice's memory as bob: %v", err)
	}
	if _, err := n.node.Search(ctx, 0, retrieval.NewQuery("alice", "x"), false); !errors.Is(err, tenant.ErrForbidden) {
		t.Errorf("search alice as bob: %v", err)
	}
	q := retrieval.NewQuery("", "x")
	q.AllUsers = true
	if _, err := n.node.Search(ctx, 0, q, false); !errors.Is(err, tenant.ErrForbidden) {
		t.Errorf("search across every user as bob: %v", err)
	}
	if _, err := n.node.ShardUsers(ctx, 0, false); !errors.Is(err, tenant.ErrForbidden) {
		t.Errorf("list the shard's users as bob: %v", err)
	}
}
