package tenant

import (
	"context"
	"errors"
	"testing"
)

func TestIdentityAllowsAndCovers(t *testing.T) {
	acme := Identity{Name: "writer:1", Users: []string{"acme-*", "solo"}}
	for user, want := range map[string]bool{"acme-1": true, "solo": true, "zeta-1": false, "acme": false, "": false} {
		if got := acme.Allows(user); got != want {
			t.Errorf("Allows(%q) = %v", user, got)
		}
	}
	if (Identity{}).Allows("anyone") {
		t.Error("the zero identity allows a user")
	}
	if !(Identity{All: true}).Allows("anyone") || (Identity{All: true}).Allows("") {
		t.Error("All: every non-empty user")
	}
	if acme.Covers(nil) || acme.Covers([]string{"*"}) || !acme.Covers([]string{"acme-*"}) {
		t.Error("Covers widens a limited identity")
	}
	if err := acme.Check("acme-2", "zeta-1"); !errors.Is(err, ErrForbidden) {
		t.Errorf("Check: %v", err)
	}
}

func TestIdentityHeaderRoundTrip(t *testing.T) {
	id := Identity{Name: "reader:ab", Users: []string{"t/*", "ü"}}
	got, err := Decode(id.Encode())
	if err != nil || got.Name != id.Name || len(got.Users) != 2 || got.Users[1] != "ü" || got.All {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	for _, bad := range []string{"!!", "bm90IGpzb24", Identity{Users: []string{"["}}.Encode()} {
		if _, err := Decode(bad); err == nil {
			t.Errorf("Decode(%q) accepted", bad)
		}
	}
	if _, ok := From(context.Background()); ok {
		t.Error("background context carries an identity")
	}
	if got, ok := From(With(context.Background(), id)); !ok || got.Name != id.Name {
		t.Error("With/From")
	}
}
