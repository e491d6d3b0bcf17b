package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/memcluster/memcluster/retrieval"
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

// allows reports whether p may act on user (empty user: no tenant data involved).
func (p principal) allows(user string) bool {
	return user == "" || retrieval.UsersMatch(p.userPatterns(), user)
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

// authorize checks the caller's token against the operation's role and every user_id the request names
// (path, query or body — the body is read, bounded, and put back for the handler). It answers 401/403 itself.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, need Role, op string) (principal, bool) {
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
	users, err := requestUsers(r)
	if err != nil {
		return p, true // the handler reports the malformed request
	}
	for _, u := range users {
		if !p.allows(u) {
			writeError(w, http.StatusForbidden, "forbidden", fmt.Sprintf("token may not access user %q", u), "user_id")
			return p, false
		}
	}
	return p, true
}

// requestUsers lists the user ids a request names, wherever they are.
func requestUsers(r *http.Request) ([]string, error) {
	var users []string
	if u := r.PathValue("user_id"); u != "" {
		users = append(users, u)
	}
	if u := r.URL.Query().Get("user_id"); u != "" {
		users = append(users, u)
	}
	if r.Body == nil || r.Method == http.MethodGet || r.Method == http.MethodDelete {
		return users, nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		// Hand the handler the same failure (e.g. the body limit) so it answers as it would have.
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		return users, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var v struct {
		UserID   string `json:"user_id"`
		Memories []struct {
			UserID string `json:"user_id"`
		} `json:"memories"`
	}
	if json.Unmarshal(body, &v) != nil {
		return users, nil
	}
	users = append(users, v.UserID)
	for _, m := range v.Memories {
		users = append(users, m.UserID)
	}
	return users, nil
}

func roleName(r Role) string {
	return map[Role]string{RoleReader: "reader", RoleWriter: "writer", RoleAdmin: "admin"}[r]
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

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
