package retrieval

import (
	"strings"
	"testing"

	"github.com/memcluster/memcluster/memory"
)

// A query across users ranks every admitted user's memories together, and never reaches a user its patterns
// leave out — however well that user's memories match.
func TestSearchAcrossUsers(t *testing.T) {
	f := newFixture(t)
	f.put(memory.Memory{UserID: "acme-1", AgentID: "bot", Text: "refund for the broken kettle", OccurredAt: t0})
	f.put(memory.Memory{UserID: "acme-2", AgentID: "bot", Text: "refund requested for a late parcel", OccurredAt: t0})
	f.put(memory.Memory{UserID: "acme-3", AgentID: "other", Text: "refund refund refund", OccurredAt: t0})
	f.put(memory.Memory{UserID: "zeta-1", AgentID: "bot", Text: "refund for the broken kettle", OccurredAt: t0})

	users := func(rs []Result) string {
		var us []string
		for _, r := range rs {
			us = append(us, r.Memory.UserID)
		}
		return strings.Join(us, ",")
	}
	q := NewQuery("", "refund kettle")
	q.AllUsers, q.MinScore = true, 0
	if got := users(f.search(q)); got != "acme-1,zeta-1,acme-3,acme-2" && got != "acme-1,zeta-1,acme-2,acme-3" {
		t.Fatalf("all users: %s", got)
	}
	q.UserPatterns = []string{"acme-*"}
	for _, r := range f.search(q) {
		if !strings.HasPrefix(r.Memory.UserID, "acme-") {
			t.Fatalf("acme-* query returned %s", r.Memory.UserID)
		}
	}
	q.AgentID = "bot"
	if got := users(f.search(q)); got != "acme-1,acme-2" {
		t.Fatalf("agent bot within acme-*: %s", got)
	}
	q.K = 1
	if got := users(f.search(q)); got != "acme-1" {
		t.Fatalf("k=1: %s", got)
	}
}

func TestAcrossUsersValidation(t *testing.T) {
	for name, q := range map[string]Query{
		"user and all":     {UserID: "u", AllUsers: true},
		"patterns one":     {UserID: "u", UserPatterns: []string{"a*"}},
		"pipeline across":  {AllUsers: true, Mode: ModePipeline},
		"bad pattern":      {AllUsers: true, UserPatterns: []string{"["}},
		"no user, not all": {},
	} {
		full := NewQuery(q.UserID, "x")
		full.AllUsers, full.UserPatterns, full.Mode = q.AllUsers, q.UserPatterns, q.Mode
		if err := full.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
