package e2e

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
)

// segFiles lists the segment files under dir.
func segFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".seg") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestExternalColdStore: with --cold-store file://DIR, tiering uploads segments to DIR and the shard keeps
// pointers; status counts them without fetching; an escalated question rehydrates from the store; an
// unreadable segment leaves the answer standing and is named in left_out; forget deletes the user's objects.
func TestExternalColdStore(t *testing.T) {
	needProcesses(t)
	dir := t.TempDir()
	p := newProc(t, "dev")
	p.start("--dev", "--cold-store", "file://"+dir)
	c := p.client(t)
	ctx := context.Background()
	waitFor(t, 30*time.Second, "a ready node", func() bool { return c.Ready(ctx) == nil })
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	old := now.AddDate(0, 0, -400)
	if _, err := c.PutBatch(ctx, []apiv1.PutRequest{
		{UserID: "ada", Text: "We paddled the kayak across Lake Tahoe at dawn.", OccurredAt: &old},
		{UserID: "ada", Text: "The kayak trip ended with a campfire on the shore of Lake Tahoe.", OccurredAt: &old}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, apiv1.PutRequest{UserID: "bo", Text: "Bo sailed to the lighthouse in a storm.", OccurredAt: &old}); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"ada", "bo"} {
		if res, err := c.TierRun(ctx, u, "180d"); err != nil || res.Moved == 0 {
			t.Fatalf("tier run %s: %+v %v", u, res, err)
		}
	}
	if files := segFiles(t, dir); len(files) != 2 {
		t.Fatalf("segments in the store: %v", files)
	}
	st, err := c.TierStatus(ctx, "ada")
	if err != nil || len(st.Types) != 1 || st.Types[0].ColdCount != 2 || st.Types[0].ColdBytes == 0 {
		t.Fatalf("tier status: %+v %v", st, err)
	}
	ask := func() apiv1.ContextResponse {
		t.Helper()
		res, err := c.Context(ctx, "ada", apiv1.ContextRequest{Query: "Tell me about the kayak trip on Lake Tahoe", Now: &now})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := ask(); !res.Escalated || !strings.Contains(res.Text, "campfire") {
		t.Fatalf("escalated answer from the external store: %+v", res)
	}
	// The store loses ada's object: the answer stands, says what it could not read.
	var adaSeg string
	for _, f := range segFiles(t, dir) {
		if strings.Contains(f, "/ada/") {
			adaSeg = f
		}
	}
	if err := os.Rename(adaSeg, adaSeg+".away"); err != nil {
		t.Fatal(err)
	}
	res := ask()
	if !res.Escalated || strings.Contains(res.Text, "campfire") || len(res.LeftOut) == 0 ||
		!strings.Contains(res.LeftOut[len(res.LeftOut)-1].Reason, "archive segment unreadable") {
		t.Fatalf("answer with the segment missing: %+v", res)
	}
	if err := os.Rename(adaSeg+".away", adaSeg); err != nil {
		t.Fatal(err)
	}
	// Forget deletes ada's objects and only hers.
	if _, err := c.DeleteUser(ctx, "ada"); err != nil {
		t.Fatal(err)
	}
	files := segFiles(t, dir)
	if len(files) != 1 || !strings.Contains(files[0], "/bo/") {
		t.Fatalf("after forgetting ada: %v", files)
	}
}
