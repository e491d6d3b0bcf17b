package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// A leader that refuses a forwarded proposal because its storage is overloaded answers 503 "overloaded"; the
// forwarding node, decoding the answer as its calls do, hands that back as storage.ErrOverloaded — not
// proposed, so not an unknown outcome — and does not retry it at once.
func TestOverloadedLeaderRefusalCrossesTheWire(t *testing.T) {
	refused := fmt.Errorf("%w: level 0 holds 10 sublevels, writes are taken again at 8", storage.ErrOverloaded)
	w := httptest.NewRecorder()
	writeRPCError(w, toRPCError(refused, nil))
	var re rpcError
	if err := json.NewDecoder(w.Body).Decode(&re); err != nil {
		t.Fatal(err)
	}
	if w.Code != http.StatusServiceUnavailable || re.Code != "overloaded" {
		t.Fatalf("leader answered %d %q, want 503 overloaded", w.Code, re.Code)
	}
	if retryable(&re) {
		t.Fatal("an overloaded leader's refusal is retried at once")
	}
	err := mapOutcome(&re)
	if !errors.Is(err, storage.ErrOverloaded) || errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("forwarding node got %v, want storage.ErrOverloaded", err)
	}
}

// A refusal as overloaded after an attempt that may have reached a leader's log (a leadership lost while it
// applied, a call cut off after it was sent) is an unknown outcome: the client must not send it again as new.
func TestOverloadAfterAReachedAttemptIsUnknown(t *testing.T) {
	refused := fmt.Errorf("%w: writes stalled", storage.ErrOverloaded)
	if err := refusedAfterReaching(refused, false); !errors.Is(err, storage.ErrOverloaded) || errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("first attempt refused: %v, want storage.ErrOverloaded", err)
	}
	if err := refusedAfterReaching(refused, true); !errors.Is(err, ErrOutcomeUnknown) || errors.Is(err, storage.ErrOverloaded) {
		t.Fatalf("refused after a reached attempt: %v, want ErrOutcomeUnknown only", err)
	}
	if err := refusedAfterReaching(ErrNoLeader, true); !errors.Is(err, ErrNoLeader) {
		t.Fatalf("another error changed: %v", err)
	}
	if !hasCode(&rpcError{Code: "not_leader"}, "not_leader") || hasCode(ErrNotLeader, "not_leader") {
		t.Fatal("hasCode does not tell a remote answer from a local error")
	}
}

// A shard leader whose storage is overloaded refuses a proposal before raft sees it, whether the proposal is its
// own or forwarded by another node: the proposer gets storage.ErrOverloaded (not an unknown outcome), the
// shard's log does not grow, and nothing is written. Once a compaction drains level 0 the leader takes writes
// again. Every node runs real Pebble with automatic compactions off and the gate at two sublevels; only the
// leader's level 0 is built up, by flushing its memtable twice. Rebalancing is paused; should the leadership
// move anyway (an election on a loaded machine), the scenario starts again with the new leader.
func TestOverloadedShardLeaderRefusesBeforeRaft(t *testing.T) {
	base := testConfig()
	base.OverloadWait = 100 * time.Millisecond
	c := newTestCluster(t, base)
	c.storage = func(o *storage.Options) { o.OverloadSublevels, o.DisableAutoCompactions = 2, true }
	c.addNodes(3)
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")
	ctx := ctxFor(t, 2*time.Minute)
	if err := c.nodes[0].SetPaused(ctx, true); err != nil { // no leadership moves for balance meanwhile
		t.Fatal(err)
	}
	const user = "alice"
	shard, err := c.nodes[0].ShardFor(ctx, user)
	if err != nil {
		t.Fatal(err)
	}
	for attempt := 1; !overloadedLeaderRefuses(t, c, shard, user); attempt++ {
		if attempt == 3 {
			t.Fatal("the shard's leadership moved in each of three attempts")
		}
		t.Logf("attempt %d: the shard's leadership moved; again with the new leader", attempt)
	}
}

// overloadedLeaderRefuses runs the scenario above once on the shard's current leader; it returns false, having
// checked nothing that a move could explain, when that replica stopped leading meanwhile.
func overloadedLeaderRefuses(t *testing.T, c *testCluster, shard uint32, user string) bool {
	t.Helper()
	var leader, other *testNode
	var rep *Replica
	waitFor(t, 40*time.Second, "a shard leader", func() bool {
		for _, tn := range c.nodes {
			if r, ok := tn.Replica(shard); ok && r.IsLeader() {
				leader, rep = tn, r
				return true
			}
		}
		return false
	})
	for _, tn := range c.nodes {
		if tn != leader {
			other = tn
		}
	}
	for i := range 2 { // two flushed memtables over the shard's applied-index key: two sublevels
		if _, err := c.put(leader, user, fmt.Sprintf("before the overload %d", i)); err != nil {
			t.Fatal(err)
		}
		if err := leader.db.Pebble().Flush(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, "the leader's storage overloaded", func() bool { return leader.db.DiskStats().Overloaded })
	last := rep.raft.LastIndex()
	for _, via := range []*testNode{leader, other} {
		id, err := c.put(via, user, "refused")
		if !rep.IsLeader() {
			return false
		}
		if !errors.Is(err, storage.ErrOverloaded) || errors.Is(err, ErrOutcomeUnknown) {
			t.Fatalf("put through %s: %v, want storage.ErrOverloaded", via.cfg.NodeID, err)
		}
		if _, err := c.get(leader, user, id, false); !errors.Is(err, memory.ErrNotFound) {
			t.Fatalf("refused put through %s: read back %v, want not found", via.cfg.NodeID, err)
		}
	}
	if now := rep.raft.LastIndex(); now != last {
		if !rep.IsLeader() {
			return false
		}
		t.Fatalf("the shard's log went from %d to %d: a refused put was proposed", last, now)
	}
	if err := leader.db.Pebble().Compact(t.Context(), []byte{0}, []byte{0xff, 0xff, 0xff, 0xff}, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "level 0 drained", func() bool { return !leader.db.DiskStats().Overloaded })
	if _, err := c.put(other, user, "after the compaction"); err != nil {
		t.Fatalf("put after level 0 drained: %v", err)
	}
	return true
}
