package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/client"
)

// forwardedPuts counts the puts the nodes forwarded to another node's leader.
const forwardedPuts = `memcluster_shard_rpc_total{op="propose",outcome="ok"}`

// checkLeaderRouting shows a client with leader routing sending a user's puts straight to the leader of its
// shard: every answer names a node of the cluster, and once the client has learnt it (and no leadership moves
// meanwhile, which the loop waits out) a run of puts makes no node forward a proposal.
func checkLeaderRouting(t *testing.T, procs []*proc) {
	t.Helper()
	ctx := context.Background()
	nodes := map[string]bool{}
	for _, p := range procs {
		nodes["http://"+p.http] = true
	}
	// Right after formation the leader balancer may be moving leaderships: wait for a round that names them all,
	// on puts and on context reads.
	names := func(path, body string, want int) bool {
		req, _ := http.NewRequest("POST", "http://"+procs[0].http+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("POST %s: %s", path, resp.Status)
		}
		if l := resp.Header.Get(apiv1.HeaderShardLeader); !nodes[l] {
			t.Logf("POST %s: %s %q, not one of the nodes %v", path, apiv1.HeaderShardLeader, l, nodes)
			return false
		}
		return true
	}
	waitFor(t, 30*time.Second, "answers naming the leader of each user's shard", func() bool {
		for u := range 4 {
			user := fmt.Sprintf("route-%d", u)
			if !names(apiv1.PathMemories, `{"user_id":"`+user+`","text":"named leader"}`, http.StatusCreated) ||
				!names(strings.Replace(apiv1.PathContext, "{user_id}", user, 1), `{"query":"named"}`, http.StatusOK) {
				return false
			}
		}
		return true
	})
	// Users of every shard enter at one node: without routing it forwards those it does not lead (which also
	// shows the metric counts); a client with leader routing learns where each user's leader is.
	put := func(c *client.Client, round int) {
		for u := range 16 {
			if _, err := c.Put(ctx, apiv1.PutRequest{UserID: fmt.Sprintf("route-%d", u), Text: fmt.Sprintf("round %d", round)}); err != nil {
				t.Fatalf("put: %v", err)
			}
		}
	}
	// Every node exports its storage's write volume (WAL, flush and compaction bytes: the write amplification);
	// the node's own start already writes to the WAL, so this shows the series is there, not what puts cost.
	waitFor(t, 30*time.Second, "storage WAL bytes exported by every node", func() bool {
		for i := range procs {
			if metricSum(procs[i:i+1], "memcluster_storage_wal_bytes_total") == 0 {
				return false
			}
		}
		return true
	})
	round := 0
	waitFor(t, 60*time.Second, "a round of 16 puts through one node that it forwards", func() bool {
		before := metricSum(procs, forwardedPuts)
		put(procs[0].client(t), round)
		round++
		return metricSum(procs, forwardedPuts) > before
	})
	c, err := client.New("http://"+procs[0].http, client.WithTimeout(10*time.Second), client.WithLeaderRouting())
	if err != nil {
		t.Fatal(err)
	}
	put(c, round)
	waitFor(t, 60*time.Second, "a round of 16 routed puts that no node forwards", func() bool {
		before := metricSum(procs, forwardedPuts)
		put(c, round)
		round++
		return metricSum(procs, forwardedPuts) == before
	})
	// A session's appends (a read of the session and a transaction each) follow the same routes.
	appends := 0
	waitFor(t, 60*time.Second, "a round of 16 routed session appends that no node forwards", func() bool {
		before := metricSum(procs, forwardedPuts)
		for u := range 16 {
			if _, err := c.Append(ctx, fmt.Sprintf("route-%d", u), "run-1", apiv1.AppendRequest{Messages: []apiv1.Message{
				{Role: "user", Text: fmt.Sprintf("turn %d", appends)}}}); err != nil {
				t.Fatalf("routed append: %v", err)
			}
		}
		appends++
		return metricSum(procs, forwardedPuts) == before
	})
	t.Logf("leader routing: %d rounds of 16 puts and %d of 16 appends in all", round, appends)
}
