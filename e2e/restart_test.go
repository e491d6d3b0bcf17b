package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/shardmap"
)

// TestRestartAfterSIGKILLRefeedsOnlyTheTail: a node SIGKILLed right after writes, deletes and a forget restarts
// without re-feeding any shard's full-text index from every record (each shard reports none or a tail), and
// without reading every record for its vectors: each shard holding memories loads the checkpoint it wrote
// before the deletes and reads only what came after. BM25 and vector search then find every acknowledged memory
// and none that was deleted.
func TestRestartAfterSIGKILLRefeedsOnlyTheTail(t *testing.T) {
	needProcesses(t)
	p := newProc(t, "r1")
	p.start("--dev", "--shards", "4")
	ctx := context.Background()
	waitReady(t, p)

	live := map[string]string{} // unique word -> user
	gone := map[string]string{}
	var doomed []memory.Memory // deleted once the checkpoints are written
	put := func(user string, from, n int) []memory.Memory {
		var reqs []apiv1.PutRequest
		for i := from; i < from+n; i++ {
			reqs = append(reqs, apiv1.PutRequest{UserID: user, Text: fmt.Sprintf("note w%sx%d about the garden", user, i)})
		}
		ms, err := p.client(t).PutBatch(ctx, reqs)
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	for u := 0; u < 8; u++ {
		user := fmt.Sprintf("user%d", u)
		for i, m := range put(user, 0, 40) {
			word := fmt.Sprintf("w%sx%d", user, i)
			switch {
			case u == 7: // forgotten below
				gone[word] = user
			case i%10 == 0:
				doomed = append(doomed, m)
				gone[word] = user
			default:
				live[word] = user
			}
		}
	}
	holding := waitCheckpoints(t, p, 8)
	for _, m := range doomed {
		if err := p.client(t).Delete(ctx, m.UserID, m.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.client(t).DeleteUser(ctx, "user7"); err != nil {
		t.Fatal(err)
	}
	for i := range put("user0", 40, 5) {
		live[fmt.Sprintf("wuser0x%d", 40+i)] = "user0"
	}
	p.kill()

	p.start("--dev", "--shards", "4")
	waitReady(t, p) // ready only once every replica held before the kill is open (and so has logged its load)
	checkLoads(t, p, holding)
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
	checkVectors(t, p, live, gone)
}

// waitCheckpoints waits until every shard holding one of the users user0..user(n-1) has written its vectors'
// checkpoint, and returns those shards.
func waitCheckpoints(t *testing.T, p *proc, users int) map[uint32]bool {
	t.Helper()
	m, err := shardmap.New(4, shardmap.Initial(4))
	if err != nil {
		t.Fatal(err)
	}
	holding := map[uint32]bool{}
	for u := range users {
		holding[m.Lookup(fmt.Sprintf("user%d", u))] = true
	}
	waitFor(t, 60*time.Second, "the shards' checkpoints", func() bool {
		for shard := range holding {
			if _, err := os.Stat(filepath.Join(p.dir, "index", fmt.Sprintf("shard-%d.vectors", shard))); err != nil {
				return false
			}
		}
		return true
	})
	return holding
}

// checkLoads checks the restarted node's index loads: no shard re-fed bleve in full, and each shard in holding
// loaded its vectors from its checkpoint and a tail.
func checkLoads(t *testing.T, p *proc, holding map[uint32]bool) {
	t.Helper()
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
		t.Log(line)
		if strings.Contains(line, `"bleve_reindexed":"full`) {
			t.Errorf("a shard re-fed its full-text index in full: %s", line)
		}
		var l struct {
			Shard   uint32
			Vectors string
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		if holding[l.Shard] && !strings.HasPrefix(l.Vectors, "checkpoint, tail of") {
			t.Errorf("shard %d did not load its vectors from its checkpoint: %s", l.Shard, line)
		}
	}
	if loaded != 4 {
		t.Fatalf("%d shards logged their index load, want 4", loaded)
	}
}

// checkVectors checks that a vector-only search of each user returns every live memory and no gone one.
func checkVectors(t *testing.T, p *proc, live, gone map[string]string) {
	t.Helper()
	found := map[string]bool{}
	users := map[string]bool{}
	for _, u := range live {
		users[u] = true
	}
	for _, u := range gone {
		users[u] = true
	}
	for user := range users {
		zero, one := 0.0, 1.0
		res, err := p.client(t).Search(context.Background(), apiv1.SearchRequest{UserID: user,
			Query: "note about the garden", K: 100, MinScore: &zero, Mode: "hybrid", VectorWeight: &one, TextWeight: &zero})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Results {
			found[strings.Fields(r.Memory.Text)[1]] = true
		}
	}
	for word := range live {
		if !found[word] {
			t.Errorf("vector search misses %q", word)
		}
	}
	for word := range gone {
		if found[word] {
			t.Errorf("vector search finds deleted %q", word)
		}
	}
}

func waitReady(t *testing.T, p *proc) {
	t.Helper()
	waitFor(t, 60*time.Second, "a ready node", func() bool {
		_, _, code := memctl(t, p.http, "health")
		return code == 0
	})
}
