package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/memcluster/memcluster/apiv1"
)

// GET /v1/users pages through the users with memories; prefix keeps those whose id starts with it.
func TestUsersPageByPrefix(t *testing.T) {
	n := startTestNode(t, Options{})
	for _, u := range []string{"a3", "a1", "b1", "a2"} {
		if w := serve(n.api, "POST", "/v1/memories", "", `{"user_id":"`+u+`","text":"hello"}`); w.Code != http.StatusCreated {
			t.Fatalf("put %s: %d %s", u, w.Code, w.Body)
		}
	}
	var got []string
	query := "prefix=a&limit=2"
	for pages := 0; ; pages++ {
		w := serve(n.api, "GET", "/v1/users?"+query, "", "")
		var res apiv1.UsersResponse
		if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &res) != nil || len(res.Users) > 2 || pages > 3 {
			t.Fatalf("%s: %d %s", query, w.Code, w.Body)
		}
		got = append(got, res.Users...)
		if res.NextCursor == "" {
			break
		}
		query = "prefix=a&limit=2&cursor=" + res.NextCursor
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"a1", "a2", "a3"}) {
		t.Errorf("users with prefix a: %v", got)
	}
	for _, bad := range []string{"limit=0", "limit=1001", "limit=x"} {
		if w := serve(n.api, "GET", "/v1/users?"+bad, "", ""); w.Code != http.StatusBadRequest {
			t.Errorf("%s: %d %s", bad, w.Code, w.Body)
		}
	}
}
