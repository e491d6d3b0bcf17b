package cluster

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Unconfirmed reads skip the quorum's confirmation, not the leader: every node answers them through the shard's
// leader, which has applied every write it acknowledged, and a follower's replica refuses them.
func TestUnconfirmedReadsSeeAcknowledgedWrites(t *testing.T) {
	c := makeCluster(t, 3, testConfig())
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")
	for i, tn := range c.nodes {
		user := fmt.Sprintf("unconfirmed-%d", i)
		id, err := c.put(tn, user, "written through "+tn.ID())
		if err != nil {
			t.Fatal(err)
		}
		for _, reader := range c.nodes {
			ctx := Unconfirmed(ctxFor(t, 10*time.Second))
			shard, err := reader.ShardFor(ctx, user)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := reader.Get(ctx, shard, user, id, false); err != nil {
				t.Fatalf("unconfirmed read of %s via %s: %v", id, reader.ID(), err)
			}
			if r, ok := reader.Replica(shard); ok && !r.IsLeader() {
				if err := r.leaderBarrier(ctx); !errors.Is(err, ErrNotLeader) {
					t.Fatalf("a follower's leader barrier: %v, want ErrNotLeader", err)
				}
			}
		}
	}
}

// A forwarded call carries the unconfirmed mode to the node that answers it; other calls arrive confirmed.
func TestUnconfirmedModeIsForwarded(t *testing.T) {
	c := makeCluster(t, 1, testConfig())
	modes := make(chan bool, 2)
	srv := httptest.NewServer(withReadMode(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		modes <- IsUnconfirmed(r.Context())
		writeJSON(w, http.StatusOK, struct{}{})
	})))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	for _, want := range []bool{true, false} {
		ctx := ctxFor(t, 5*time.Second)
		if want {
			ctx = Unconfirmed(ctx)
		}
		if err := c.nodes[0].call(ctx, http.MethodGet, addr, "/read", nil, "", nil, &struct{}{}); err != nil {
			t.Fatal(err)
		}
		if got := <-modes; got != want {
			t.Fatalf("forwarded with unconfirmed=%v, answered with unconfirmed=%v", want, got)
		}
	}
}
