package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/memcluster/memcluster/internal/tenant"
)

// Role is what a token may do. Each role includes the ones below it.
type Role int

// Roles, weakest first.
const (
	RoleReader Role = iota + 1 // get, search, cluster status
	RoleWriter                 // + put, delete, forget
	RoleAdmin                  // + every user, operator endpoints
)

// ErrAuthFile marks a malformed auth file.
var ErrAuthFile = errors.New("invalid auth file")

// TokenEntry is one line of the auth file: {"token": "...", "role": "writer", "users": ["tenant-a/*"]}.
// Users are path.Match patterns over user_id; empty means every user.
type TokenEntry struct {
	Token string   `json:"token"`
	Role  string   `json:"role"`
	Users []string `json:"users,omitempty"`
}

type principal struct {
	name  string // for the audit log: the role and a token fingerprint, never the token
	role  Role
	users []string
}

// Auth checks bearer tokens. A nil *Auth allows everything (single-user development).
type Auth struct {
	byHash       map[[32]byte]principal
	clusterToken []byte
}

// LoadAuthFile reads a JSON list of TokenEntry. clusterToken authenticates node-to-node calls and is required.
func LoadAuthFile(file, clusterToken string) (*Auth, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAuthFile, err)
	}
	var entries []TokenEntry
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&entries); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrAuthFile, file, err)
	}
	return NewAuth(entries, clusterToken)
}

// NewAuth validates entries: tokens non-empty, at least 16 bytes and unique; known roles; valid patterns.
func NewAuth(entries []TokenEntry, clusterToken string) (*Auth, error) {
	if len(clusterToken) < 16 {
		return nil, fmt.Errorf("%w: a cluster token of at least 16 bytes is required with authentication", ErrAuthFile)
	}
	a := &Auth{byHash: map[[32]byte]principal{}, clusterToken: []byte(clusterToken)}
	for i, e := range entries {
		role, ok := map[string]Role{"reader": RoleReader, "writer": RoleWriter, "admin": RoleAdmin}[e.Role]
		switch {
		case len(e.Token) < 16:
			return nil, fmt.Errorf("%w: entry %d: token shorter than 16 bytes", ErrAuthFile, i)
		case !ok:
			return nil, fmt.Errorf("%w: entry %d: role %q (want reader, writer or admin)", ErrAuthFile, i, e.Role)
		case e.Token == clusterToken:
			return nil, fmt.Errorf("%w: entry %d: token equals the cluster token", ErrAuthFile, i)
		}
		for _, p := range e.Users {
			if _, err := path.Match(p, ""); err != nil {
				return nil, fmt.Errorf("%w: entry %d: user pattern %q: %v", ErrAuthFile, i, p, err)
			}
		}
		h := sha256.Sum256([]byte(e.Token))
		if _, dup := a.byHash[h]; dup {
			return nil, fmt.Errorf("%w: entry %d: duplicate token", ErrAuthFile, i)
		}
		a.byHash[h] = principal{name: fmt.Sprintf("%s:%x", e.Role, h[:4]), role: role, users: e.Users}
	}
	return a, nil
}

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if t, ok := strings.CutPrefix(h, "Bearer "); ok {
		return strings.TrimSpace(t)
	}
	return ""
}

// identify returns the principal of the request's token.
func (a *Auth) identify(r *http.Request) (principal, bool) {
	p, ok := a.byHash[sha256.Sum256([]byte(bearer(r)))]
	return p, ok
}

// identity is what p may touch, as checked on decoded requests here and again by the shard that executes them.
func (p principal) identity() tenant.Identity {
	return tenant.Identity{Name: p.name, All: p.allowsAll(), Users: p.userPatterns()}
}

type principalKey struct{}

func withPrincipal(ctx context.Context, p principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// principalOf is the caller route() authorized (an admin when authentication is off).
func principalOf(ctx context.Context) principal {
	if p, ok := ctx.Value(principalKey{}).(principal); ok {
		return p
	}
	return principal{name: "anonymous", role: RoleAdmin}
}

// userPatterns limits a query across users to what p may see: nil (every user) for an admin or an unlimited
// token, else its patterns.
func (p principal) userPatterns() []string {
	if p.role == RoleAdmin || len(p.users) == 0 {
		return nil
	}
	return p.users
}

// allowsAll reports whether p sees every user (an admin, or a token with no user patterns).
func (p principal) allowsAll() bool { return p.userPatterns() == nil }

// internal guards the node-to-node API with the cluster token (constant-time compare).
func (a *Auth) internal(next http.Handler) http.Handler {
	if a == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(bearer(r)), a.clusterToken) != 1 {
			writeError(w, http.StatusUnauthorized, "unauthenticated", "internal API: missing or wrong cluster token", "")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authenticate identifies the caller's token and checks it against the operation's role, answering 401/403
// itself. Which users the request touches is decided later, on the decoded request (route.go).
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, need Role, op string) (principal, bool) {
	a := s.opts.Auth
	if a == nil {
		return principal{name: "anonymous", role: RoleAdmin}, true
	}
	p, ok := a.identify(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="memcluster"`)
		writeError(w, http.StatusUnauthorized, "unauthenticated", "missing or unknown bearer token", "")
		return p, false
	}
	if p.role < need {
		writeError(w, http.StatusForbidden, "forbidden", fmt.Sprintf("%s needs a %s token", op, roleName(need)), "")
		return p, false
	}
	return p, true
}

func roleName(r Role) string {
	return map[Role]string{RoleReader: "reader", RoleWriter: "writer", RoleAdmin: "admin"}[r]
}

// requireNodeCert refuses internal calls that did not present a certificate verified against the cluster CA.
func requireNodeCert(on bool, next http.Handler) http.Handler {
	if !on {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
			writeError(w, http.StatusUnauthorized, "unauthenticated", "internal API: a node certificate is required", "")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Mount serves an adapter's handler (MCP: /mcp) beside the API. With authentication on, a request without a
// known token is refused here (401); everything else is decided per API call the adapter makes with the
// caller's token, so the adapter can do no more than the token may.
func (s *Server) Mount(pattern string, h http.Handler) {
	s.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := s.authenticate(w, r, RoleReader, pattern); ok {
			h.ServeHTTP(w, r)
		}
	}))
}
