package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
)

// TestDevNodeWithMemctl is the newcomer's path: `memnode --dev`, then memctl put/get/search/delete, and bad
// input answered with a non-zero exit and one line.
func TestDevNodeWithMemctl(t *testing.T) {
	needProcesses(t)
	p := startDevNode(t)
	out, errOut, code := memctl(t, p.http, "-o", "json", "put", "--user", "alice", "--tag", "travel",
		"--time", "2026-03-01T08:00:00Z", "I prefer morning flights to Paris")
	if code != 0 {
		t.Fatalf("put: exit %d: %s", code, errOut)
	}
	var put struct{ ID string }
	if err := json.Unmarshal([]byte(out), &put); err != nil || put.ID == "" {
		t.Fatalf("put -o json printed %q", out)
	}
	memctl(t, p.http, "put", "--user", "alice", "My cat Tom likes tuna")
	memctl(t, p.http, "put", "--user", "bob", "Bob also prefers morning flights")

	out, _, code = memctl(t, p.http, "get", "--user", "alice", put.ID)
	if code != 0 || !strings.Contains(out, "I prefer morning flights to Paris") {
		t.Fatalf("get: exit %d: %s", code, out)
	}
	out, _, code = memctl(t, p.http, "-o", "json", "search", "--user", "alice", "--k", "3", "morning flights")
	var res struct {
		Results []struct {
			ID, Text  string
			Score     float64 `json:"score"`
			TextScore float64 `json:"text_score"`
		} `json:"results"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Results) == 0 || res.Results[0].ID != put.ID {
		t.Fatalf("search: exit %d: %s", code, out)
	}
	if strings.Contains(out, "Bob also") {
		t.Fatal("alice's search returned bob's memory")
	}
	out, _, code = memctl(t, p.http, "-o", "json", "cluster", "status")
	if code != 0 || !strings.Contains(out, `"healthy": true`) {
		t.Fatalf("cluster status: exit %d: %s", code, out)
	}
	if _, _, code = memctl(t, p.http, "delete", "--user", "alice", put.ID); code != 0 {
		t.Fatalf("delete: exit %d", code)
	}
	if _, errOut, code = memctl(t, p.http, "get", "--user", "alice", put.ID); code == 0 || !strings.Contains(errOut, "not_found") {
		t.Fatalf("get after delete: exit %d, %q", code, errOut)
	}
	for _, bad := range [][]string{
		{"put", "--user", "alice", "--type", "dream", "text"},
		{"put", "--user", "alice", "--time", "yesterday", "text"},
		{"put", "text without user"},
		{"search", "--user", "alice", "--k", "0", "q"},
		{"get", "--user", "alice", "not-an-id"},
	} {
		_, errOut, code := memctl(t, p.http, bad...)
		if code == 0 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || errOut == "" {
			t.Errorf("memctl %v: exit %d, stderr %q: want non-zero and one line", bad, code, errOut)
		}
	}
	// The node still serves after all of that.
	if _, _, code := memctl(t, p.http, "health"); code != 0 {
		t.Fatal("node unhealthy after bad input")
	}
}

// TestSIGTERMStopsPromptly: a node under write load stops cleanly and quickly on SIGTERM, then restarts on its
// data with everything acknowledged.
func TestSIGTERMStopsPromptly(t *testing.T) {
	needProcesses(t)
	p := newProc(t, "dev")
	p.start("--dev")
	ctx := context.Background()
	c := p.client(t)
	waitFor(t, 30*time.Second, "a ready node", func() bool { return c.Ready(ctx) == nil })
	var ids []string
	for i := 0; i < 200; i++ {
		m, err := c.Put(ctx, apiv1.PutRequest{UserID: fmt.Sprintf("u%d", i%7), Text: fmt.Sprintf("memory number %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	start := time.Now()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { _, err := p.cmd.Process.Wait(); done <- err }()
	select {
	case <-done:
		t.Logf("stopped in %v", time.Since(start))
	case <-time.After(25 * time.Second):
		p.dumpLog()
		t.Fatal("memnode did not exit within 25s of SIGTERM")
	}
	p.cmd = nil
	p.start("--dev")
	waitFor(t, 30*time.Second, "a ready node after restart", func() bool { return c.Ready(ctx) == nil })
	for i, id := range ids {
		if _, err := c.Get(ctx, fmt.Sprintf("u%d", i%7), id, false); err != nil {
			t.Fatalf("memory %d lost across a clean restart: %v", i, err)
		}
	}
}
