package client

import (
	"context"
	"errors"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// WithLeaderRouting sends the requests about one user (memories, sessions, facts, patterns, context, tiering;
// not stale reads, which any replica answers, and not workspace, export or forget requests) to the node that
// leads the user's shard, as the cluster names it on earlier answers
// (apiv1.HeaderShardLeader), instead of to the client's address, which forwards what it does not lead: one
// network hop and one node's work less a request. A user's first request, and any while its leader is unknown or
// unreachable, goes to the client's address. A leader the client cannot connect to within a second is left alone
// for half a minute, and the request goes to the client's address instead: nothing of it was sent, so a put is
// not made twice. A request that fails after it was sent is not repeated; its user's route is forgotten.
//
// The bearer token goes to the nodes named. nodes, when given, are the only API addresses ("http://host:port")
// the client follows; with none it follows any address of its own scheme the cluster names, so use that only
// where the nodes' advertised addresses (memnode --http-addr) are what the client should reach, not behind a
// load balancer or a port mapping.
func WithLeaderRouting(nodes ...string) Option {
	return func(c *Client) {
		r := newRouter(c.base.Scheme)
		for _, n := range nodes {
			if u := r.parse(strings.TrimRight(n, "/")); u != nil {
				r.allowed[u.Host] = true
			}
		}
		r.allowAny = len(nodes) == 0
		c.routes = r
	}
}

// Bounds of a router.
const (
	maxRoutes        = 1 << 16          // users remembered; past it, a new user's route replaces an arbitrary other one
	maxNodes         = 256              // parsed node addresses kept
	routeConnectWait = time.Second      // how long a routed request may take to get a connection
	routeDownFor     = 30 * time.Second // how long a node that could not be reached is not routed to
)

// errRouteConnect is the cause of a routed request given up before it had a connection.
var errRouteConnect = errors.New("no connection to the shard leader within the routing wait")

// router remembers, per user, the node that last led the user's shard. Nodes are few: their parsed addresses
// are shared by every user they lead.
type router struct {
	scheme   string
	allowAny bool
	allowed  map[string]bool // hosts that may be followed, unless allowAny

	mu    sync.Mutex
	users map[string]*url.URL
	nodes map[string]*url.URL  // by the header's value
	down  map[string]time.Time // host → until when it is not routed to
}

func newRouter(scheme string) *router {
	return &router{scheme: scheme, allowed: map[string]bool{}, users: map[string]*url.URL{},
		nodes: map[string]*url.URL{}, down: map[string]time.Time{}}
}

// base is where a request for user goes: its leader when known and not down, else nil (the client's address).
func (r *router) base(user string) *url.URL {
	if r == nil || user == "" {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.users[user]
	if u == nil || r.isDown(u.Host) {
		return nil
	}
	return u
}

// learn records the leader an answer named for user; an unusable, unlisted or down name forgets the user's
// route, and an answer that names none (a route that does not, an older node) leaves it as it was.
func (r *router) learn(user, leader string) {
	if r == nil || user == "" || leader == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.node(leader)
	if u == nil || r.isDown(u.Host) {
		delete(r.users, user)
		return
	}
	if _, known := r.users[user]; !known && len(r.users) >= maxRoutes {
		for k := range r.users {
			delete(r.users, k)
			break
		}
	}
	r.users[user] = u
}

// failed forgets user's route after a routed request failed without an answer; when it had no connection
// (nothing sent), its node is also left alone for routeDownFor.
func (r *router) failed(user string, base *url.URL, connected bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.users, user)
	if !connected {
		r.down[base.Host] = time.Now().Add(routeDownFor)
	}
}

// isDown reports whether host failed to connect lately; r.mu is held.
func (r *router) isDown(host string) bool {
	until, ok := r.down[host]
	if ok && time.Now().After(until) {
		delete(r.down, host)
		return false
	}
	return ok
}

// node parses a leader's address once (r.mu is held); nil unless it may be followed.
func (r *router) node(leader string) *url.URL {
	if leader == "" {
		return nil
	}
	if u, ok := r.nodes[leader]; ok {
		return u
	}
	u := r.parse(leader)
	if u != nil && !r.allowAny && !r.allowed[u.Host] {
		u = nil
	}
	if len(r.nodes) < maxNodes {
		r.nodes[leader] = u
	}
	return u
}

// parse returns a node's API address as an origin of the client's scheme, or nil.
func (r *router) parse(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != r.scheme || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" ||
		(u.Path != "" && u.Path != "/") {
		return nil
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host} // a node's own address: no proxy's path prefix
}

// connectWatch bounds how long a routed request may wait for its connection, and reports whether it got one (if
// not, nothing of the request was sent).
type connectWatch struct {
	connected atomic.Bool
	timer     *time.Timer
}

// watchConnect returns ctx for a routed request, its watch, and a stop to call when the request is done.
func watchConnect(ctx context.Context) (context.Context, *connectWatch, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &connectWatch{}
	w.timer = time.AfterFunc(routeConnectWait, func() {
		if !w.connected.Load() {
			cancel(errRouteConnect)
		}
	})
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) {
		w.connected.Store(true)
		w.timer.Stop()
	}})
	return ctx, w, func() { w.timer.Stop(); cancel(nil) }
}
