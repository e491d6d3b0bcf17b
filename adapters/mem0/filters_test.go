package mem0

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseFilters(t *testing.T) {
	cases := []struct {
		in, want, err string // want: user/agent/run/tags/from; err: part of the 400's message
	}{
		{in: `{"user_id":"alice"}`, want: "alice///[]/false"},
		{in: `{"AND":[{"user_id":"alice"},{"agent_id":{"eq":"bot"}},{"run_id":{"in":["r1"]}},{"categories":{"in":["travel"]}},{"created_at":{"gte":"2026-01-01"}}]}`,
			want: "alice/bot/r1/[travel]/true"},
		{in: `{"OR":[{"user_id":"alice"}]}`, want: "alice///[]/false"},
		{in: `{"agent_id":"bot","user_id":"*"}`, want: "/bot//[]/false"},
		{in: `{}`, err: "at least one of user_id"},
		{in: `{"OR":[{"user_id":"a"},{"user_id":"b"}]}`, err: "OR over 2 conditions"},
		{in: `{"NOT":[{"user_id":"a"}]}`, err: "NOT cannot be expressed"},
		{in: `{"user_id":"a","metadata":{"k":"v"}}`, err: "metadata cannot be expressed"},
		{in: `{"user_id":{"in":["a","b"]}}`, err: "in over several values"},
		{in: `{"user_id":{"ne":"a"}}`, err: "only equality"},
		{in: `{"user_id":{"regex":"a"}}`, err: `unknown operator "regex"`},
		{in: `{"AND":[{"user_id":"a"},{"user_id":"b"}]}`, err: "two different values"},
		{in: `{"user_id":"a","app_id":"x"}`, err: "app_id cannot be expressed"},
		{in: `{"user_id":"a","created_at":{"eq":"2026-01-01"}}`, err: "only gt, gte, lt and lte"},
		{in: `{"user_id":"a","colour":"red"}`, err: `unknown field "colour"`},
	}
	for _, tc := range cases {
		var m map[string]any
		if err := json.Unmarshal([]byte(tc.in), &m); err != nil {
			t.Fatal(err)
		}
		w, err := parseFilters(m)
		if tc.err != "" {
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: got %v, want a 400 naming %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		got := strings.Join([]string{w.user, w.agent, w.run, "[" + strings.Join(w.tags, ",") + "]"}, "/") + "/" +
			map[bool]string{true: "true", false: "false"}[w.from != nil]
		if got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestMemIDsCarryTheUser(t *testing.T) {
	id := memID("tenant-a/alice", "01JD0000000000000000000000")
	user, mid, err := parseMemID(id)
	if err != nil || user != "tenant-a/alice" || mid != "01JD0000000000000000000000" {
		t.Fatalf("%s: %q %q %v", id, user, mid, err)
	}
	for _, bad := range []string{"", "01JD0000000000000000000000", "nope.YWxpY2U", "01JD0000000000000000000000.", "01JD0000000000000000000000.!!"} {
		if _, _, err := parseMemID(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
