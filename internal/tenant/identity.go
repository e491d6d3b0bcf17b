package tenant

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
)

// Header carries an Identity on node-to-node calls (base64url of its JSON). A call without it is the cluster's
// own work (a sweeper, a re-embedding), trusted by the cluster token alone.
const Header = "Memcluster-Principal"

// ErrForbidden marks an operation outside the identity it runs for.
var ErrForbidden = errors.New("forbidden")

// Identity is who an API request was authorized for. The zero value allows nobody: every user is All, never
// the absence of patterns.
type Identity struct {
	Name  string   `json:"name"`            // role and token fingerprint, for logs; never the token
	All   bool     `json:"all,omitempty"`   // every user (an admin, or a token not limited to some users)
	Users []string `json:"users,omitempty"` // path.Match patterns over user_id, when not All
}

// Allows reports whether the identity may act on user. The empty user is nobody's and is never allowed.
func (id Identity) Allows(user string) bool {
	if user == "" {
		return false
	}
	if id.All {
		return true
	}
	for _, p := range id.Users {
		if ok, _ := path.Match(p, user); ok {
			return true
		}
	}
	return false
}

// Covers reports whether patterns (a query across users) stay within the identity: every pattern is one of
// the identity's own. nil patterns mean every user.
func (id Identity) Covers(patterns []string) bool {
	if id.All {
		return true
	}
	if len(patterns) == 0 {
		return false
	}
	own := make(map[string]bool, len(id.Users))
	for _, p := range id.Users {
		own[p] = true
	}
	for _, p := range patterns {
		if !own[p] {
			return false
		}
	}
	return true
}

// Check returns ErrForbidden, naming the user, unless the identity allows every one of users.
func (id Identity) Check(users ...string) error {
	for _, u := range users {
		if !id.Allows(u) {
			return fmt.Errorf("%w: %s may not access user %q", ErrForbidden, id.Name, u)
		}
	}
	return nil
}

type key struct{}

// With returns ctx carrying id.
func With(ctx context.Context, id Identity) context.Context { return context.WithValue(ctx, key{}, id) }

// From returns the identity ctx carries; ok is false for the cluster's own work.
func From(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(key{}).(Identity)
	return id, ok
}

// Encode is the Header value of id.
func (id Identity) Encode() string {
	b, _ := json.Marshal(id) // strings and a bool: cannot fail
	return base64.RawURLEncoding.EncodeToString(b)
}

// Decode parses a Header value. Anything malformed is an error: a receiving node refuses the call rather than
// guess whom it is for.
func Decode(v string) (Identity, error) {
	var id Identity
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return id, fmt.Errorf("%s header: %w", Header, err)
	}
	if err := json.Unmarshal(b, &id); err != nil {
		return id, fmt.Errorf("%s header: %w", Header, err)
	}
	for _, p := range id.Users {
		if _, err := path.Match(p, ""); err != nil {
			return id, fmt.Errorf("%s header: user pattern %q: %w", Header, p, err)
		}
	}
	return id, nil
}
