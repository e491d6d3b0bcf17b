package client

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
)

// fakeNode answers puts and gets, naming leader (a function of the user) as the user's shard leader, and
// records the users it was asked about.
type fakeNode struct {
	srv    *httptest.Server
	mu     sync.Mutex
	users  []string
	leader func(user string) string
}

func newFakeNode(t *testing.T, leader func(string) string) *fakeNode {
	n := &fakeNode{leader: leader}
	n.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user := r.URL.Query().Get("user_id")
		if r.Method == "POST" {
			var req apiv1.PutRequest
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.UserID == "" {
				http.Error(w, `{"error":{"code":"invalid_argument","message":"bad body"}}`, http.StatusBadRequest)
				return
			}
			user = req.UserID
		}
		n.mu.Lock()
		n.users = append(n.users, user)
		n.mu.Unlock()
		if l := n.leader(user); l != "" {
			w.Header().Set(apiv1.HeaderShardLeader, l)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":"m1","user_id":"` + user + `"}`))
	}))
	t.Cleanup(n.srv.Close)
	return n
}

func (n *fakeNode) asked() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.users...)
}

func TestLeaderRoutingSendsAUsersRequestsToItsLeader(t *testing.T) {
	ctx := context.Background()
	var leaderURL string
	leader := newFakeNode(t, func(string) string { return leaderURL })
	leaderURL = leader.srv.URL
	// The entry node leads u0's shard; u1's is led by the other node.
	entry := newFakeNode(t, func(u string) string {
		if u == "u1" {
			return leaderURL
		}
		return ""
	})
	c, err := New(entry.srv.URL, WithLeaderRouting())
	if err != nil {
		t.Fatal(err)
	}
	put := func(u string) {
		t.Helper()
		if _, err := c.Put(ctx, apiv1.PutRequest{UserID: u, Text: "x"}); err != nil {
			t.Fatalf("put %s: %v", u, err)
		}
	}
	put("u1") // entry: names the leader
	put("u1") // leader
	put("u0") // entry: names none
	if _, err := c.Get(ctx, "u1", "m1", false); err != nil {
		t.Fatal(err)
	}
	if got, want := entry.asked(), []string{"u1", "u0"}; !slices.Equal(got, want) {
		t.Fatalf("entry asked about %v, want %v", got, want)
	}
	if got, want := leader.asked(), []string{"u1", "u1"}; !slices.Equal(got, want) {
		t.Fatalf("leader asked about %v, want %v", got, want)
	}

	// A leader that cannot be dialled is forgotten: the put goes to the client's address, body and all.
	leader.srv.Close()
	put("u1")
	if got := entry.asked(); len(got) != 3 || got[2] != "u1" {
		t.Fatalf("after the leader went away, entry asked about %v, want u1 last", got)
	}
}

func TestLeaderRoutingFollowsOnlyNodeOriginsOfTheClientsScheme(t *testing.T) {
	ctx := context.Background()
	for _, named := range []string{"https://127.0.0.1:1", "http://127.0.0.1:1/v1", "http://user@127.0.0.1:1",
		"http://127.0.0.1:1?x=1", "127.0.0.1:1", "not a url"} {
		entry := newFakeNode(t, func(string) string { return named })
		c, err := New(entry.srv.URL, WithLeaderRouting())
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := c.Put(ctx, apiv1.PutRequest{UserID: "u", Text: "x"}); err != nil {
				t.Fatalf("leader named %q: put: %v", named, err)
			}
		}
		if got := len(entry.asked()); got != 2 {
			t.Fatalf("leader named %q: entry asked %d times, want 2 (the name not followed)", named, got)
		}
	}
}

func TestWithoutLeaderRoutingEveryRequestGoesToTheClientsNode(t *testing.T) {
	ctx := context.Background()
	var leaderURL string
	leader := newFakeNode(t, func(string) string { return leaderURL })
	leaderURL = leader.srv.URL
	entry := newFakeNode(t, func(string) string { return leaderURL })
	c, err := New(entry.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := c.Put(ctx, apiv1.PutRequest{UserID: "u", Text: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if len(entry.asked()) != 3 || len(leader.asked()) != 0 {
		t.Fatalf("entry %v, leader %v: want every request at the entry", entry.asked(), leader.asked())
	}
}

// A leader that takes a request and drops the connection: the put fails (it may have been made, so it is not
// sent again), and the user's next request goes to the client's address.
func TestLeaderRoutingDoesNotRepeatARequestThatWasSent(t *testing.T) {
	ctx := context.Background()
	var asked atomic.Int32
	dropper := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	t.Cleanup(dropper.Close)
	entry := newFakeNode(t, func(string) string { return dropper.URL })
	c, err := New(entry.srv.URL, WithLeaderRouting())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, apiv1.PutRequest{UserID: "u", Text: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, apiv1.PutRequest{UserID: "u", Text: "x"}); err == nil {
		t.Fatal("a put whose connection dropped after it was sent succeeded")
	}
	if asked.Load() == 0 || len(entry.asked()) != 1 {
		t.Fatalf("leader asked %d times, entry %v: want the routed put sent once and not repeated at the entry",
			asked.Load(), entry.asked())
	}
	if _, err := c.Put(ctx, apiv1.PutRequest{UserID: "u", Text: "x"}); err != nil {
		t.Fatal(err)
	}
	if len(entry.asked()) != 2 {
		t.Fatalf("after the failure the entry was asked %d times, want the route forgotten", len(entry.asked()))
	}
}

// A leader whose connection hangs: within the routing wait the put goes to the client's address, and the
// leader is left alone afterwards even though the entry keeps naming it.
func TestLeaderRoutingGivesUpOnAConnectionThatHangs(t *testing.T) {
	ctx := context.Background()
	const hung = "http://hung.invalid:7480"
	entry := newFakeNode(t, func(string) string { return hung })
	var dials atomic.Int32
	tr := http.DefaultTransport.(*http.Transport).Clone()
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == "hung.invalid:7480" {
			dials.Add(1)
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return dial(ctx, network, addr)
	}
	c, err := New(entry.srv.URL, WithHTTPClient(&http.Client{Transport: tr}), WithLeaderRouting(entry.srv.URL, hung))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for range 4 {
		if _, err := c.Put(ctx, apiv1.PutRequest{UserID: "u", Text: "x"}); err != nil {
			t.Fatalf("put: %v", err)
		}
	}
	if d := dials.Load(); d != 1 {
		t.Fatalf("%d dials of the hung leader, want 1 (then left alone)", d)
	}
	if got := len(entry.asked()); got != 4 {
		t.Fatalf("entry asked %d times, want every put (%v)", got, time.Since(start))
	}
}

// With nodes listed, a leader named outside them is not followed; a stale read is never routed.
func TestLeaderRoutingFollowsOnlyListedNodesAndNotStaleReads(t *testing.T) {
	ctx := context.Background()
	var leaderURL string
	leader := newFakeNode(t, func(string) string { return leaderURL })
	leaderURL = leader.srv.URL
	entry := newFakeNode(t, func(string) string { return leaderURL })
	c, err := New(entry.srv.URL, WithLeaderRouting(entry.srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := c.Put(ctx, apiv1.PutRequest{UserID: "u", Text: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if len(leader.asked()) != 0 {
		t.Fatalf("an unlisted leader was asked %v", leader.asked())
	}
	c, err = New(entry.srv.URL, WithLeaderRouting())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, apiv1.PutRequest{UserID: "u", Text: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "u", "m1", true); err != nil {
		t.Fatal(err)
	}
	if len(leader.asked()) != 0 {
		t.Fatalf("a stale read went to the leader: %v", leader.asked())
	}
}
