package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
)

// TestTierEscalateRehydrateRestore: 400-day-old kayak-trip episodes tiered cold by `tier run --older-than 180d`
// are found again by a context question that escalates to the archive; a question recent memory answers does
// not escalate; asking about the trip several times restores it to the hot tier; forget leaves nothing.
func TestTierEscalateRehydrateRestore(t *testing.T) {
	c, p := devNode(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	old := now.AddDate(0, 0, -400)
	var reqs []apiv1.PutRequest
	for i, text := range []string{
		"We paddled the kayak across Lake Tahoe at dawn with Maya.",
		"The kayak trip ended with a campfire on the north shore of Lake Tahoe.",
		"Maya capsized the kayak near Emerald Bay and we laughed for an hour.",
	} {
		at := old.Add(time.Duration(i) * time.Hour)
		reqs = append(reqs, apiv1.PutRequest{UserID: "sol", Text: text, OccurredAt: &at})
	}
	recent := now.Add(-24 * time.Hour)
	reqs = append(reqs, apiv1.PutRequest{UserID: "sol", Text: "Yesterday I bought a blue bicycle helmet at the market.", OccurredAt: &recent})
	stored, err := c.PutBatch(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := memctl(t, p.http, "-o", "json", "tier", "run", "--user", "sol", "--older-than", "180d")
	if code != 0 || !strings.Contains(out, `"moved": 3`) {
		t.Fatalf("tier run: %d %s %s", code, out, errOut)
	}
	if _, err := c.Get(ctx, "sol", stored[0].ID, false); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("a tiered memory is still hot: %v", err)
	}
	out, errOut, code = memctl(t, p.http, "-o", "json", "tier", "status", "--user", "sol")
	if code != 0 || !strings.Contains(out, `"cold_count": 3`) || !strings.Contains(out, `"hot_count": 1`) {
		t.Fatalf("tier status: %d %s %s", code, out, errOut)
	}
	ask := func(q string) apiv1.ContextResponse {
		t.Helper()
		res, err := c.Context(ctx, "sol", apiv1.ContextRequest{Query: q, Now: &now})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := ask("What did I buy at the market?")
	if res.Escalated || !strings.Contains(res.Text, "bicycle helmet") {
		t.Fatalf("recent question: escalated=%v confidence=%.2f\n%s", res.Escalated, res.Confidence, res.Text)
	}
	res = ask("Tell me about the kayak trip on Lake Tahoe")
	if !res.Escalated || !strings.Contains(res.Text, "kayak") {
		t.Fatalf("old trip: escalated=%v\n%s", res.Escalated, res.Text)
	}
	var cold bool
	for _, b := range res.Blocks {
		for _, it := range b.Items {
			cold = cold || (it.Tier == "cold" && strings.Contains(it.Text, "kayak"))
		}
	}
	if !cold {
		t.Fatalf("no rehydrated cold item: %+v", res.Blocks)
	}
	// Read often enough, the trip returns to the hot tier (the restore runs after each answer).
	for i := 0; i < 3; i++ {
		ask("Tell me about the kayak trip on Lake Tahoe")
		time.Sleep(300 * time.Millisecond)
	}
	waitFor(t, 10*time.Second, "the trip back in the hot tier", func() bool {
		_, err := c.Get(ctx, "sol", stored[0].ID, false)
		return err == nil
	})
	// Forget reaches every tier.
	if _, err := c.DeleteUser(ctx, "sol"); err != nil {
		t.Fatal(err)
	}
	res = ask("Tell me about the kayak trip on Lake Tahoe")
	if strings.Contains(res.Text, "kayak") {
		t.Fatalf("forgotten user still has memories:\n%s", res.Text)
	}
}

// TestCompactorTiersAgedMemories: the shard leader's background compactor moves memories older than the
// policy's 90 episodic days to cold segments by itself. The node restarts with its clock 100 days ahead
// (the hidden --clock-offset), which is how the passing of time looks to it.
func TestCompactorTiersAgedMemories(t *testing.T) {
	needProcesses(t)
	p := newProc(t, "dev")
	p.start("--dev")
	c := p.client(t)
	ctx := context.Background()
	waitFor(t, 30*time.Second, "a ready node", func() bool { return c.Ready(ctx) == nil })
	stored, err := c.PutBatch(ctx, []apiv1.PutRequest{{UserID: "uma", Text: "We planted tomatoes in the garden."},
		{UserID: "uma", Text: "The tomatoes got blight in August."}, {UserID: "uma", Text: "Important: my passport number changed.",
			Importance: ptr(0.9)}})
	if err != nil {
		t.Fatal(err)
	}
	p.kill()
	p.start("--dev", "--clock-offset", "2400h", "--tier-every", "1s")
	waitFor(t, 30*time.Second, "a ready node", func() bool { return c.Ready(ctx) == nil })
	waitFor(t, 30*time.Second, "the compactor to tier the garden", func() bool {
		_, err := c.Get(ctx, "uma", stored[0].ID, false)
		return errors.Is(err, memory.ErrNotFound)
	})
	if _, err := c.Get(ctx, "uma", stored[2].ID, false); err != nil {
		t.Fatalf("an important memory must stay hot: %v", err)
	}
	st, err := c.TierStatus(ctx, "uma")
	if err != nil || len(st.Types) != 1 || st.Types[0].ColdCount != 2 || st.Types[0].HotCount != 1 || st.Types[0].Archive != 1 {
		t.Fatalf("tier status %+v %v", st, err)
	}
}

func ptr(f float64) *float64 { return &f }

// TestColdSegmentsSurviveANodeLoss: a user's cold segments are replicated with the shard, so after SIGKILL of
// any one node of three (each is tried in turn, restarting the last) escalation still rehydrates the cold trip.
func TestColdSegmentsSurviveANodeLoss(t *testing.T) {
	needProcesses(t)
	procs := []*proc{newProc(t, "n1"), newProc(t, "n2"), newProc(t, "n3")}
	for _, p := range procs {
		p.start("--bootstrap-expect", "3", "--join", procs[0].gossip, "--shards", "4", "--replicas", "3")
	}
	ctx := context.Background()
	waitFor(t, 60*time.Second, "a healthy 3-node cluster", func() bool {
		st, err := procs[0].client(t).ClusterStatus(ctx)
		return err == nil && st.Healthy && len(st.Nodes) == 3
	})
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	old := now.AddDate(-1, -2, 0)
	c := procs[0].client(t)
	if _, err := c.PutBatch(ctx, []apiv1.PutRequest{
		{UserID: "val", Text: "We paddled the kayak across Lake Tahoe at dawn.", OccurredAt: &old},
		{UserID: "val", Text: "The kayak trip ended with a campfire on the shore of Lake Tahoe.", OccurredAt: &old}}); err != nil {
		t.Fatal(err)
	}
	if res, err := c.TierRun(ctx, "val", "180d"); err != nil || res.Moved != 2 {
		t.Fatalf("tier run: %+v %v", res, err)
	}
	// Without --user: every user of every shard is tiered, and the status covers every shard.
	if _, err := c.PutBatch(ctx, []apiv1.PutRequest{{UserID: "wes", Text: "Old notes on the sailing course.", OccurredAt: &old},
		{UserID: "wes", Text: "A fresh note.", OccurredAt: &now}}); err != nil {
		t.Fatal(err)
	}
	var run apiv1.TierRunResponse
	out, errOut, code := memctl(t, procs[1].http, "-o", "json", "tier", "run", "--older-than", "180d")
	if code != 0 || json.Unmarshal([]byte(out), &run) != nil || run.Moved != 1 || run.Users != 2 || run.Partial {
		t.Fatalf("cluster-wide tier run: exit %d %s %s", code, out, errOut)
	}
	var st apiv1.TierStatusResponse
	out, errOut, code = memctl(t, procs[2].http, "-o", "json", "tier", "status")
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Partial || len(st.Shards) != 4 ||
		len(st.Types) != 1 || st.Types[0].ColdCount != 3 || st.Types[0].Archive != 2 || st.Types[0].HotCount != 1 {
		t.Fatalf("cluster-wide tier status: exit %d %s %s", code, out, errOut)
	}
	for i, victim := range procs {
		victim.kill()
		other := procs[(i+1)%3].client(t)
		waitFor(t, 60*time.Second, "the trip from the archive with "+victim.id+" down", func() bool {
			res, err := other.Context(ctx, "val", apiv1.ContextRequest{Query: "Tell me about the kayak trip on Lake Tahoe", Now: &now})
			return err == nil && res.Escalated && strings.Contains(res.Text, "campfire")
		})
		victim.start() // same data dir and addresses: it rejoins from what it remembers
		waitFor(t, 60*time.Second, "a healthy cluster again", func() bool {
			st, err := other.ClusterStatus(ctx)
			return err == nil && st.Healthy
		})
	}
}
