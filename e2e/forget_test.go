package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
)

// TestForgetUserRemovesEverything: `memctl forget` removes every memory of one user, atomically, from records
// and both indexes, and touches no other user.
func TestForgetUserRemovesEverything(t *testing.T) {
	needProcesses(t)
	p := newProc(t, "dev")
	p.start("--dev")
	ctx := context.Background()
	c := p.client(t)
	waitFor(t, 30*time.Second, "a ready node", func() bool { return c.Ready(ctx) == nil })
	var reqs []apiv1.PutRequest
	for i := 0; i < 50; i++ {
		reqs = append(reqs, apiv1.PutRequest{UserID: "fran", Text: fmt.Sprintf("fran's memory %d about gardening", i)})
	}
	ms, err := c.PutBatch(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	other, err := c.Put(ctx, apiv1.PutRequest{UserID: "gus", Text: "gus's memory about gardening"})
	if err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := memctl(t, p.http, "forget", "--user", "fran"); code == 0 || !strings.Contains(errOut, "--yes") {
		t.Fatalf("forget without --yes: exit %d %q", code, errOut)
	}
	out, errOut, code := memctl(t, p.http, "-o", "json", "forget", "--user", "fran", "--yes")
	if code != 0 || !strings.Contains(out, `"deleted": 50`) {
		t.Fatalf("forget: exit %d %s %s", code, out, errOut)
	}
	if _, err := c.Get(ctx, "fran", ms[0].ID, false); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("get after forget: %v", err)
	}
	zero := 0.0
	for _, mode := range []struct{ v, t float64 }{{0.7, 0.3}, {1, 0}, {0, 1}} {
		v, tw := mode.v, mode.t
		res, err := c.Search(ctx, apiv1.SearchRequest{UserID: "fran", Query: "gardening memory", MinScore: &zero,
			VectorWeight: &v, TextWeight: &tw})
		if err != nil || len(res.Results) != 0 {
			t.Fatalf("search (weights %v/%v) after forget: %v, %d results", v, tw, err, len(res.Results))
		}
	}
	if _, err := c.Get(ctx, "gus", other.ID, false); err != nil {
		t.Fatalf("another user's memory went too: %v", err)
	}
}
