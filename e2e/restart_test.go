package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
)

// TestRestartAfterSIGKILLRefeedsOnlyTheTail: a node SIGKILLed right after writes, deletes and a forget restarts
// without re-feeding any shard's full-text index from every record (each shard reports none or a tail), and
// BM25 then finds every acknowledged memory and none that was deleted.
func TestRestartAfterSIGKILLRefeedsOnlyTheTail(t *testing.T) {
	needProcesses(t)
	p := newProc(t, "r1")
	p.start("--dev", "--shards", "4")
	ctx := context.Background()
	waitReady(t, p)

	live := map[string]string{} // unique word -> user
	gone := map[string]string{}
	for u := 0; u < 8; u++ {
		user := fmt.Sprintf("user%d", u)
		var reqs []apiv1.PutRequest
		for i := 0; i < 40; i++ {
			reqs = append(reqs, apiv1.PutRequest{UserID: user, Text: fmt.Sprintf("note w%dx%d about the garden", u, i)})
		}
		ms, err := p.client(t).PutBatch(ctx, reqs)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range ms {
			word := fmt.Sprintf("w%dx%d", u, i)
			switch {
			case u == 7: // forgotten below
				gone[word] = user
			case i%10 == 0:
				if err := p.client(t).Delete(ctx, user, m.ID); err != nil {
					t.Fatal(err)
				}
				gone[word] = user
			default:
				live[word] = user
			}
		}
	}
	if _, err := p.client(t).DeleteUser(ctx, "user7"); err != nil {
		t.Fatal(err)
	}
	p.kill()

	p.start("--dev", "--shards", "4")
	waitReady(t, p) // ready only once every replica held before the kill is open (and so has logged its load)
	logs, err := os.ReadFile(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	loaded := 0
	for _, line := range strings.Split(string(logs), "\n") {
		if !strings.Contains(line, `"indexes loaded"`) {
			continue
		}
		loaded++
		if strings.Contains(line, `"bleve_reindexed":"full`) {
			t.Errorf("a shard re-fed its full-text index in full: %s", line)
		}
		t.Log(line)
	}
	if loaded != 4 {
		t.Fatalf("%d shards logged their index load, want 4", loaded)
	}
	check := func(words map[string]string, want bool) {
		for word, user := range words {
			zero, one := 0.0, 1.0
			res, err := p.client(t).Search(ctx, apiv1.SearchRequest{UserID: user, Query: word, K: 3, MinScore: &zero,
				Mode: "hybrid", VectorWeight: &zero, TextWeight: &one})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, r := range res.Results {
				found = found || strings.Contains(r.Memory.Text, word+" ")
			}
			if found != want {
				t.Errorf("BM25 search of %s for %q: found %v, want %v", user, word, found, want)
			}
		}
	}
	check(live, true)
	check(gone, false)
}

func waitReady(t *testing.T, p *proc) {
	t.Helper()
	waitFor(t, 60*time.Second, "a ready node", func() bool {
		_, _, code := memctl(t, p.http, "health")
		return code == 0
	})
}
