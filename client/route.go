package client

import (
	"errors"
	"net"
	"net/url"
	"sync"
)

// WithLeaderRouting sends each user's requests to the node that leads the user's shard, as the cluster names it
// on earlier answers (apiv1.HeaderShardLeader), instead of always to the client's address, which forwards what it
// does not lead: one network hop and one node's work less a request. A user's first request, and any request
// after its leader is unknown or unreachable, goes to the client's address; an address that cannot be dialled
// is forgotten and the request is sent to the client's address instead (nothing was sent, so a put is not
// repeated). Only addresses of the client's own scheme are followed, and the bearer token goes to them: use it
// when the client can reach the nodes' advertised addresses (not through a single load balancer).
func WithLeaderRouting() Option { return func(c *Client) { c.routes = newRouter(c.base.Scheme) } }

// maxRoutes bounds the users a router remembers; past it, a user's route replaces an arbitrary other one.
const maxRoutes = 1 << 16

// router remembers, per user, the node that last led the user's shard. Nodes are few: their parsed addresses
// are shared by every user they lead.
type router struct {
	scheme string
	mu     sync.Mutex
	users  map[string]*url.URL
	nodes  map[string]*url.URL
}

func newRouter(scheme string) *router {
	return &router{scheme: scheme, users: map[string]*url.URL{}, nodes: map[string]*url.URL{}}
}

// base is where a request for user goes: its leader when known, else the client's address.
func (r *router) base(user string) *url.URL {
	if r == nil || user == "" {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.users[user]
}

// learn records the leader an answer named for user; an empty or unusable name forgets the user's route.
func (r *router) learn(user, leader string) {
	if r == nil || user == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.node(leader)
	if u == nil {
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

// node parses a leader's address once; it must be a bare http(s) origin of the client's own scheme.
func (r *router) node(leader string) *url.URL {
	if leader == "" {
		return nil
	}
	if u, ok := r.nodes[leader]; ok {
		return u
	}
	u, err := url.Parse(leader)
	if err != nil || u.Scheme != r.scheme || u.Host == "" || u.User != nil || u.RawQuery != "" ||
		u.Fragment != "" || (u.Path != "" && u.Path != "/") {
		u = nil
	} else {
		u = &url.URL{Scheme: u.Scheme, Host: u.Host} // a node's own address: no proxy's path prefix
	}
	if len(r.nodes) < 64 {
		r.nodes[leader] = u
	}
	return u
}

// unreachable forgets every user routed to base, after a dial to it failed.
func (r *router) unreachable(base *url.URL) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for user, u := range r.users {
		if u == base {
			delete(r.users, user)
		}
	}
}

// dialFailed reports whether err is a failure to connect, before anything of the request was sent.
func dialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
