package server

import (
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
)

func TestNewAuthValidates(t *testing.T) {
	const cl = "cluster-token-0123456789"
	ok := TokenEntry{Token: "token-0123456789abcdef", Role: "writer", Users: []string{"acme-*"}}
	cases := map[string]struct {
		entries []TokenEntry
		cluster string
		want    string
	}{
		"valid":          {[]TokenEntry{ok}, cl, ""},
		"no cluster":     {[]TokenEntry{ok}, "", "cluster token"},
		"short token":    {[]TokenEntry{{Token: "short", Role: "admin"}}, cl, "shorter than 16"},
		"unknown role":   {[]TokenEntry{{Token: "token-0123456789abcdef", Role: "root"}}, cl, `role "root"`},
		"duplicate":      {[]TokenEntry{ok, ok}, cl, "duplicate"},
		"bad pattern":    {[]TokenEntry{{Token: "token-0123456789abcdef", Role: "reader", Users: []string{"["}}}, cl, "pattern"},
		"reuses cluster": {[]TokenEntry{{Token: cl, Role: "reader"}}, cl, "equals the cluster token"},
	}
	for name, tc := range cases {
		_, err := NewAuth(tc.entries, tc.cluster)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if !errors.Is(err, ErrAuthFile) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error mentioning %q", name, err, tc.want)
		}
	}
}

func TestPrincipalAllows(t *testing.T) {
	p := principal{role: RoleWriter, users: []string{"acme-*", "solo"}}
	for user, want := range map[string]bool{"acme-1": true, "solo": true, "zeta-1": false, "acme": false, "": false} {
		if got := p.identity().Allows(user); got != want {
			t.Errorf("allows(%q) = %v", user, got)
		}
	}
	if !(principal{role: RoleAdmin, users: []string{"x"}}).identity().Allows("anyone") {
		t.Error("admin is limited by patterns")
	}
}

// byHashOf returns the principal of token (tests only).
func (a *Auth) byHashOf(token string) principal { return a.byHash[sha256.Sum256([]byte(token))] }
