package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/client"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/transfer"
)

// userState is what an export must carry over: every memory (ids, texts, times, metadata), the facts with
// their history, the cold tier, and what a search answers.
type userState struct {
	Memories []memory.Memory
	Facts    []apiv1.Fact
	History  []apiv1.HistoryEvent
	Cold     []apiv1.TierCount
	Search   []string
}

func readState(t *testing.T, ctx context.Context, c *client.Client, user string) userState {
	t.Helper()
	var s userState
	opts := client.ListOptions{Limit: 3} // several pages
	for {
		page, err := c.List(ctx, user, opts)
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		s.Memories = append(s.Memories, page.Memories...)
		if opts.Cursor = page.NextCursor; opts.Cursor == "" {
			break
		}
	}
	for i := range s.Memories {
		s.Memories[i].EmbedModel = ""
	}
	var err error
	if s.Facts, err = c.Facts(ctx, user, true, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if s.History, err = c.History(ctx, user, ""); err != nil {
		t.Fatal(err)
	}
	st, err := c.TierStatus(ctx, user)
	if err != nil {
		t.Fatal(err)
	}
	s.Cold = st.Types
	zero := 0.0
	res, err := c.Search(ctx, apiv1.SearchRequest{UserID: user, Query: "trip to Lisbon with the kids", K: 10, MinScore: &zero})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Results {
		s.Search = append(s.Search, r.ID)
	}
	return s
}

// TestExportForgetImport: memctl exports a user (memories, facts with history, cold items) through a 3-node
// cluster with authentication, the user is forgotten, and memctl import brings back the same memories, facts,
// history, cold tier and search results; a second import changes nothing; a malformed line is named by its
// number; a tenant's token cannot export another tenant, nor every user.
func TestExportForgetImport(t *testing.T) {
	needProcesses(t)
	procs := startAuthCluster(t)
	ctx := context.Background()
	admin, err := client.New("http://"+procs[0].http, client.WithBearerToken(tokAdmin), client.WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	acme, _ := client.New("http://"+procs[1].http, client.WithBearerToken(tokAcmeWriter), client.WithTimeout(10*time.Second))

	const user = "acme-7"
	old := time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
	recent := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	var reqs []apiv1.PutRequest
	for i, text := range []string{"Trip to Lisbon with the kids in May", "Booked a hotel near the Lisbon river",
		"Dentist appointment moved to Friday", "The kids loved the tram ride in Lisbon", "Bought running shoes"} {
		at := recent.Add(time.Duration(i) * time.Minute)
		if i < 2 {
			at = old.Add(time.Duration(i) * time.Minute) // these go cold
		}
		reqs = append(reqs, apiv1.PutRequest{UserID: user, AgentID: "planner", Text: text, OccurredAt: &at,
			Tags: []string{"life"}, Metadata: map[string]string{"n": string(rune('a' + i))}})
	}
	if _, err := acme.PutBatch(ctx, reqs); err != nil {
		t.Fatal(err)
	}
	for _, fact := range []string{"I live in Porto", "I moved to Lisbon"} {
		if _, err := acme.Remember(ctx, user, fact, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.TierRun(ctx, user, "180d"); err != nil {
		t.Fatal(err)
	}
	if _, err := acme.Put(ctx, apiv1.PutRequest{UserID: "zeta-7", Text: "zeta's own memory"}); err == nil {
		t.Fatal("acme's token wrote a zeta user")
	}
	zeta, _ := client.New("http://"+procs[2].http, client.WithBearerToken(tokZetaWriter))
	if _, err := zeta.Put(ctx, apiv1.PutRequest{UserID: "zeta-7", Text: "zeta's own memory"}); err != nil {
		t.Fatal(err)
	}
	before := readState(t, ctx, acme, user)
	if len(before.Facts) != 2 || len(before.History) < 3 || before.Cold[0].ColdCount == 0 || len(before.Search) == 0 {
		t.Fatalf("setup: %d facts, %d history events, tiers %+v, %d search results", len(before.Facts),
			len(before.History), before.Cold, len(before.Search))
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "acme-7.jsonl")
	acmeCtl := func(args ...string) (string, string, int) {
		return memctl(t, procs[1].http, append([]string{"--token", tokAcmeWriter}, args...)...)
	}
	if out, errOut, code := acmeCtl("-o", "json", "export", "--user", user, "--out", file); code != 0 {
		t.Fatalf("export: exit %d %s %s", code, out, errOut)
	}
	// Tenant isolation: acme's token exports neither a zeta user nor every user.
	for _, args := range [][]string{{"export", "--user", "zeta-7"}, {"export", "--all-users"}} {
		out, errOut, code := acmeCtl(args...)
		if code == 0 || !strings.Contains(errOut, "403") || strings.Contains(out, "zeta's own memory") {
			t.Fatalf("%v with acme's token: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	all, errOut, code := memctl(t, procs[0].http, "--token", tokAdmin, "export", "--all-users")
	if code != 0 || !strings.Contains(all, "zeta's own memory") || !strings.Contains(all, "Lisbon") {
		t.Fatalf("export --all-users with the admin token: exit %d %s", code, errOut)
	}

	if _, errOut, code := acmeCtl("forget", "--user", user, "--yes"); code != 0 {
		t.Fatalf("forget: %s", errOut)
	}
	if page, err := acme.List(ctx, user, client.ListOptions{}); err != nil || len(page.Memories) != 0 {
		t.Fatalf("after forget: %v, %d memories", err, len(page.Memories))
	}
	out, errOut, code := acmeCtl("-o", "json", "import", "--file", file)
	if code != 0 {
		t.Fatalf("import: exit %d %s %s", code, out, errOut)
	}
	after := readState(t, ctx, acme, user)
	if !reflect.DeepEqual(before, after) {
		b, _ := json.MarshalIndent(before, "", " ")
		a, _ := json.MarshalIndent(after, "", " ")
		t.Fatalf("state after import differs:\nbefore %s\nafter %s", b, a)
	}

	out, errOut, code = acmeCtl("-o", "json", "import", "--file", file)
	var sum transfer.Summary
	if err := json.Unmarshal([]byte(out), &sum); code != 0 || err != nil {
		t.Fatalf("second import: exit %d %v %s %s", code, err, out, errOut)
	}
	if sum.Changed() != 0 || sum.Kinds["memory"].Unchanged != len(before.Memories) || sum.Kinds["cold"].Unchanged == 0 {
		t.Fatalf("second import changed something: %s", out)
	}

	lines := strings.SplitAfter(readFile(t, file), "\n")
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(lines[0]+lines[1]+`{"kind":"memory","user_id":"acme-7","memory":`+"\n"+lines[2]), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := acmeCtl("import", "--file", bad); code == 0 || !strings.Contains(errOut, "line 3") {
		t.Fatalf("malformed line: exit %d, stderr %q", code, errOut)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
