package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
)

// TestContextPlansRetrievesAndFitsBudget: the context pipeline plans "last week" relative to the request's
// time, reads only that week's episodes, brings the user's facts, and never exceeds the token budget.
func TestContextPlansRetrievesAndFitsBudget(t *testing.T) {
	c, p := devNode(t)
	ctx := context.Background()
	at := func(y int, m time.Month, d int) *time.Time { t := time.Date(y, m, d, 10, 0, 0, 0, time.UTC); return &t }
	var reqs []apiv1.PutRequest
	for _, e := range []struct {
		when *time.Time
		text string
	}{
		{at(2026, 3, 3), "I went kayaking on the lake with Sam and we saw herons."},
		{at(2026, 3, 5), "I finished the quarterly report and presented it to the board."},
		{at(2026, 3, 7), "I baked sourdough bread and visited my sister in Lyon."},
		{at(2026, 2, 20), "I did my taxes and went to the dentist."},
		{at(2026, 3, 10), "I bought new running shoes."},
	} {
		reqs = append(reqs, apiv1.PutRequest{UserID: "rae", Text: e.text, OccurredAt: e.when})
	}
	if _, err := c.PutBatch(ctx, reqs); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Remember(ctx, "rae", "I live in Lyon.", time.Time{}); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 11, 12, 0, 0, 0, time.UTC) // a Wednesday: last week is Mon 2 – Sun 8 March
	res, err := c.Context(ctx, "rae", apiv1.ContextRequest{Query: "What did I do last week?", Now: &now, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	var plan struct {
		Time *struct{ From, To time.Time }
	}
	b, _ := json.Marshal(res.Plan)
	_ = json.Unmarshal(b, &plan)
	if plan.Time == nil || !plan.Time.From.Equal(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)) ||
		!plan.Time.To.Equal(time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("plan time range: %s", b)
	}
	var episodes []string
	for _, bl := range res.Blocks {
		if bl.Kind != "episodic" {
			continue
		}
		for _, it := range bl.Items {
			episodes = append(episodes, it.Text)
			if it.Time == nil || it.Time.Before(plan.Time.From) || !it.Time.Before(plan.Time.To) || it.Tier != "hot" {
				t.Errorf("episode outside last week or without time/tier: %+v", it)
			}
		}
	}
	if len(episodes) != 3 {
		t.Fatalf("last week's episodes: %q\n%s", episodes, res.Text)
	}
	if len(res.Stages) == 0 {
		t.Error("--explain without stages")
	}
	// A fact question brings the fact.
	res, err = c.Context(ctx, "rae", apiv1.ContextRequest{Query: "Where do I live?", Now: &now})
	if err != nil || !strings.Contains(res.Text, "lives in Lyon") {
		t.Fatalf("fact question: %+v %v", res, err)
	}
	// The budget holds, through memctl too.
	out, errOut, code := memctl(t, p.http, "-o", "json", "context", "--user", "rae", "--budget", "200",
		"--now", now.Format(time.RFC3339), "Tell me everything about kayaking, reports, bread, Lyon and taxes")
	if code != 0 {
		t.Fatalf("memctl context: %s", errOut)
	}
	var r apiv1.ContextResponse
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Tokens > 200 || r.Budget != 200 {
		t.Fatalf("budget 200: tokens %d, %v\n%s", r.Tokens, err, out)
	}
	if _, errOut, code := memctl(t, p.http, "context", "--user", "rae", "--budget", "5", "x"); code == 0 ||
		!strings.Contains(errOut, "--budget") {
		t.Fatalf("a budget of 5 must be refused: %d %q", code, errOut)
	}
}
