package server

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/internal/tenant"
)

// Every /v1 endpoint is registered through handle, and handle is the only way to register one. A request is
// decoded exactly once — the user of its path or query, and its JSON body into the route's typed value — and
// authorized on that decoded value, which is what the handler then executes. The handler is handed a request
// whose body is gone (http.NoBody), so no second parser can disagree with the one that was authorized. A route
// states whose data its request touches (its scope function); a request that names no user where it must is
// refused, never let through.

// userFrom says where a route's request names its user.
type userFrom string

const (
	userNone  userFrom = ""      // no tenant data (cluster status)
	userPath  userFrom = "path"  // the {user_id} path segment
	userQuery userFrom = "query" // the user_id query parameter (optional where the scope allows)
	userBody  userFrom = "body"  // fields of the decoded body
)

// bodyRule says whether a route takes a JSON body.
type bodyRule int

const (
	bodyNone     bodyRule = iota // nothing but whitespace may be sent
	bodyOptional                 // an empty body is the zero value; otherwise one JSON object
	bodyRequired                 // one JSON object
	// bodyStream: a long transfer either way (a backup streamed out or in; admin routes only). The body is
	// handed to the handler unread, with no size limit and no request timeout, and the server's read and
	// write deadlines are lifted: it ends when it is done or the client goes away.
	bodyStream
)

// endpoint describes one /v1 route; the route table (Routes) lists them for tests and docs.
type endpoint struct {
	Method, Path, Name string
	Role               Role
	User               userFrom
	Body               bodyRule
}

// call is a request as its handler receives it: decoded once and authorized.
type decoded[B any] struct {
	user string // the validated path or query user ("" when the route has none, or the query left it out)
	body B
	who  principal
}

// scope is whose data a decoded request touches. Exactly one kind is set; the zero scope is refused.
type scope struct {
	users  []string // these users: each must be named (non-empty) and allowed
	across bool     // no user named, on purpose: the request spans the users the principal may see
	every  bool     // no user named, on purpose: the request spans every user; the principal must see all
	none   bool     // no tenant data at all
}

func ofUsers(users ...string) scope { return scope{users: users} }

// pathOrQueryUser is the scope of a route whose user is its path or query user.
func pathOrQueryUser[B any](c *decoded[B]) scope { return ofUsers(c.user) }

// Routes lists the /v1 endpoints in the order they were registered.
func (s *Server) Routes() []endpoint { return append([]endpoint(nil), s.endpoints...) }

// handle registers e: h runs only for a request decoded into B and authorized on the scope scopeOf derives
// from it.
func handle[B any](s *Server, e endpoint, scopeOf func(*decoded[B]) scope, h func(http.ResponseWriter, *http.Request, *decoded[B])) {
	s.endpoints = append(s.endpoints, e)
	s.bodies = append(s.bodies, reflect.TypeFor[B]()) // the decoded body, for the OpenAPI document
	s.handleFunc(e.Method+" "+e.Path, s.instrument(e, func(w http.ResponseWriter, r *http.Request, p principal) {
		c := &decoded[B]{who: p}
		if !decodeCall(s, w, r, e, c) {
			return
		}
		sc := scopeOf(c)
		if !s.authorizeScope(w, e, p, sc) || !s.admit(w, r, e, p, sc) {
			return
		}
		r = r.WithContext(tenant.With(withPrincipal(r.Context(), p), p.identity()))
		if e.Body != bodyStream {
			r.Body = http.NoBody
		}
		h(w, r, c)
	}))
}

// decodeCall fills c from the path, the query and the body, answering 4xx itself.
func decodeCall[B any](s *Server, w http.ResponseWriter, r *http.Request, e endpoint, c *decoded[B]) bool {
	switch e.User {
	case userPath:
		c.user = r.PathValue("user_id")
	case userQuery:
		vs := r.URL.Query()["user_id"]
		if len(vs) > 1 {
			writeError(w, http.StatusBadRequest, "invalid_argument", "user_id: given more than once", "user_id")
			return false
		}
		if len(vs) == 1 {
			c.user = vs[0]
		}
	}
	if c.user != "" || e.User == userPath {
		if err := s.opts.Limits.ValidateID("user_id", c.user, true); err != nil {
			s.fail(w, r, err)
			return false
		}
	}
	if e.Body == bodyStream {
		return true
	}
	return decodeBody(w, r, e.Body, &c.body)
}

// authorizeScope checks the decoded request's users against the principal, failing closed: a scope that
// names nobody where it must is 400, a user outside the token's patterns 403.
func (s *Server) authorizeScope(w http.ResponseWriter, e endpoint, p principal, sc scope) bool {
	id := p.identity()
	switch {
	case sc.none:
		return true
	case sc.across:
		return true // the handler narrows the query to p.userPatterns()
	case sc.every:
		if id.All {
			return true
		}
		writeError(w, http.StatusForbidden, "forbidden",
			e.Name+" without user_id spans every user: it needs an admin token or one not limited to some users", "user_id")
		return false
	case len(sc.users) == 0:
		writeError(w, http.StatusBadRequest, "invalid_argument", e.Name+": the request names no user_id", "user_id")
		return false
	}
	for _, u := range sc.users {
		if u == "" {
			writeError(w, http.StatusBadRequest, "invalid_argument", "user_id: required", "user_id")
			return false
		}
		if !id.Allows(u) {
			writeError(w, http.StatusForbidden, "forbidden", fmt.Sprintf("token may not access user %q", u), "user_id")
			return false
		}
	}
	return true
}

// admit applies what follows authorization: the tenant's rate, the node's writability, the audit trail.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, e endpoint, p principal, sc scope) bool {
	if ok, wait := s.limits.allow(tenantOf(p, sc), time.Now()); !ok {
		s.metrics.limited.Inc()
		w.Header().Set("Retry-After", retryAfter(wait))
		writeJSON(w, http.StatusTooManyRequests, apiv1.Error{Error: apiv1.ErrorBody{Code: "rate_limited",
			Message: fmt.Sprintf("tenant over %g requests/s; retry in %s", s.opts.TenantRate, wait.Round(time.Millisecond))}})
		return false
	}
	if e.Role >= RoleWriter && !s.writable(w) {
		return false
	}
	if e.Role == RoleWriter && !s.unburdened(w, r) {
		return false
	}
	if e.Name == "forget" || e.Role == RoleAdmin {
		// Audit trail of destructive and operator actions: who (role and token fingerprint, never the token),
		// what, on whom (none named: the whole cluster).
		s.log.Info("audit", "op", e.Name, "principal", p.name, "users", sc.users, "remote", r.RemoteAddr)
	}
	return true
}

// instrument wraps a route with the body limit, timeout, trace span, metrics, the in-flight bound and the
// token's role check; next receives the identified principal.
func (s *Server) instrument(e endpoint, next func(http.ResponseWriter, *http.Request, principal)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
		if e.Body == bodyStream {
			ctx, cancel = context.WithCancel(r.Context())
			rc := http.NewResponseController(w)
			_, _ = rc.SetReadDeadline(time.Time{}), rc.SetWriteDeadline(time.Time{})
		}
		defer cancel()
		ctx, span := s.opts.Tracer.Start(ctx, "api."+e.Name)
		defer span.End()
		r = r.WithContext(ctx)
		if e.Body != bodyStream {
			r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		defer func() { s.metrics.observe(e.Name, sw.status, time.Since(start)) }()
		if !s.acquire(ctx) {
			s.metrics.shed.Inc()
			writeError(sw, http.StatusTooManyRequests, "overloaded",
				fmt.Sprintf("more than %d requests in flight; retry later", s.opts.MaxInFlight), "")
			return
		}
		defer func() { <-s.slots }()
		if p, ok := s.authenticate(sw, r, e.Role, e.Name); ok {
			next(sw, r, p)
		}
	}
}

// mediaJSON reports whether a Content-Type names JSON (application/json or a +json type, any parameters).
func mediaJSON(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}
