package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
)

// TestOverloadSheds429: with one in-flight slot, a burst of large batch puts is partly refused with 429 and
// Retry-After; nothing fails otherwise, every accepted batch is stored whole, and the node keeps serving.
func TestOverloadSheds429(t *testing.T) {
	needProcesses(t)
	p := newProc(t, "dev")
	p.start("--dev", "--max-in-flight", "1", "--max-body-bytes", "4194304")
	ctx := context.Background()
	c := p.client(t)
	waitFor(t, 30*time.Second, "a ready node", func() bool { return c.Ready(ctx) == nil })
	var mems []apiv1.PutRequest
	for i := 0; i < 500; i++ {
		mems = append(mems, apiv1.PutRequest{UserID: "olga", Text: fmt.Sprintf("memory %d %s", i, strings.Repeat("word ", 40))})
	}
	body, _ := json.Marshal(apiv1.PutBatchRequest{Memories: mems})
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for i := 0; i < 24; i++ {
		wg.Go(func() {
			resp, err := http.Post("http://"+p.http+apiv1.PathMemoriesBatch, "application/json", bytes.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			mu.Lock()
			codes[resp.StatusCode]++
			mu.Unlock()
			if resp.StatusCode == 429 && resp.Header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
		})
	}
	wg.Wait()
	t.Logf("status codes: %v", codes)
	if codes[429] == 0 || codes[201] == 0 || codes[201]+codes[429] != 24 {
		t.Fatalf("want a mix of 201 and 429 only, got %v", codes)
	}
	zero := 0.0
	res, err := c.Search(ctx, apiv1.SearchRequest{UserID: "olga", Query: "memory word", K: 1000, MinScore: &zero, VectorWeight: new(0.0), TextWeight: new(1.0)})
	if err != nil {
		t.Fatal(err)
	}
	if want := min(1000, 500*codes[201]); len(res.Results) != want {
		t.Fatalf("%d accepted batches, %d memories found, want %d", codes[201], len(res.Results), want)
	}
	if _, err := c.Put(ctx, apiv1.PutRequest{UserID: "olga", Text: "still serving"}); err != nil {
		t.Fatalf("node not serving after the burst: %v", err)
	}
}

// TestTenantRateLimit: one tenant over its rate gets 429 rate_limited with Retry-After; another is unaffected.
func TestTenantRateLimit(t *testing.T) {
	needProcesses(t)
	p := newProc(t, "dev")
	p.start("--dev", "--tenant-rate", "5", "--tenant-burst", "5")
	ctx := context.Background()
	c := p.client(t)
	waitFor(t, 30*time.Second, "a ready node", func() bool { return c.Ready(ctx) == nil })
	limited := 0
	for i := 0; i < 20; i++ {
		code, body := do(t, p.http, "", apiCall{"POST", "/v1/search", `{"user_id":"noisy","query":"x"}`})
		if code == 429 {
			limited++
			if !strings.Contains(body, "rate_limited") {
				t.Fatalf("429 body %s", body)
			}
		}
	}
	if limited < 10 {
		t.Fatalf("only %d of 20 rapid requests limited at 5/s with burst 5", limited)
	}
	if code, body := do(t, p.http, "", apiCall{"POST", "/v1/search", `{"user_id":"quiet","query":"x"}`}); code != 200 {
		t.Fatalf("another tenant throttled: %d %s", code, body)
	}
}
