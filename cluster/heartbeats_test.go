package cluster

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// A 3-node cluster whose shard groups coalesce their heartbeats forms, elects, replicates, fails over when a
// node stops and takes the node back; the heartbeats really travel in batches.
func TestHeartbeatCoalescingClusterFormsReplicatesAndFailsOver(t *testing.T) {
	cfg := testConfig()
	// Enough groups, and a window wide enough, that several heartbeats to one peer share most windows.
	cfg.Shards = 16
	cfg.HeartbeatCoalesce, cfg.HeartbeatCoalesceWindow = true, 20*time.Millisecond
	c := makeCluster(t, 3, cfg)
	c.waitHealthy(c.nodes[0], 60*time.Second, "a healthy cluster")
	for _, tn := range c.nodes {
		if tn.hb == nil {
			t.Fatalf("%s: heartbeat coalescing is off", tn.ID())
		}
	}

	// Writes through every node land on their shards' leaders and reach every replica.
	var written []struct{ user, id string }
	for i := 0; i < 12; i++ {
		user := fmt.Sprintf("hb-user-%d", i)
		id, err := c.put(c.nodes[i%3], user, fmt.Sprintf("memory %d", i))
		if err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		written = append(written, struct{ user, id string }{user, id})
	}
	for _, tn := range c.nodes {
		waitFor(t, 30*time.Second, "every replica to apply the writes", func() bool {
			for _, w := range written {
				if _, err := c.get(tn, w.user, w.id, true); err != nil {
					return false
				}
			}
			return true
		})
	}

	// Every node sends and receives batches, and across the cluster a batch holds more than one request on
	// average (per node that depends on how many groups it leads, which rebalancing changes).
	var batches, coalesced float64
	for _, tn := range c.nodes {
		m := tn.metrics
		waitFor(t, 30*time.Second, tn.ID()+" to send and receive coalesced heartbeats", func() bool {
			return counterValue(t, m.heartbeatBatches) >= 50 && counterValue(t, m.heartbeatsReceived) > 0
		})
	}
	waitFor(t, 30*time.Second, "batches of more than one request on average", func() bool {
		batches, coalesced = 0, 0
		for _, tn := range c.nodes {
			batches += counterValue(t, tn.metrics.heartbeatBatches)
			coalesced += counterValue(t, tn.metrics.heartbeatsCoalesced)
		}
		return coalesced > 1.2*batches
	})
	t.Logf("%.0f empty AppendEntries in %.0f batches (%.2f per batch)", coalesced, batches, coalesced/batches)

	// Failover: the leader of a shard stops; writes resume on the others, whose heartbeats to the stopped node
	// fall back to direct RPCs (which fail, as they would without coalescing).
	const user = "hb-failover"
	shard, err := c.nodes[0].ShardFor(ctxFor(t, 30*time.Second), user)
	if err != nil {
		t.Fatal(err)
	}
	var leader *testNode
	waitFor(t, 30*time.Second, "a shard leader", func() bool {
		for _, tn := range c.nodes {
			if r, ok := tn.Replica(shard); ok && r.IsLeader() {
				leader = tn
				return true
			}
		}
		return false
	})
	var others []*testNode
	for _, tn := range c.nodes {
		if tn != leader {
			others = append(others, tn)
		}
	}
	leader.stop()
	start := time.Now()
	var ids []string
	for i := 0; i < 10; i++ {
		id, err := c.put(others[i%2], user, fmt.Sprintf("after the stop %d", i))
		if err != nil {
			t.Fatalf("write %d after the leader stopped: %v", i, err)
		}
		ids = append(ids, id)
	}
	t.Logf("writes resumed %v after the leader stopped", time.Since(start))
	waitFor(t, 30*time.Second, "heartbeats to the stopped node to go direct", func() bool {
		return counterValue(t, others[0].metrics.heartbeatsDirect)+counterValue(t, others[1].metrics.heartbeatsDirect) > 0
	})

	// The node comes back: it catches up, and the survivors batch their heartbeats to it again.
	before := counterValue(t, others[0].metrics.heartbeatsReceived)
	c.restart(leader)
	waitFor(t, 40*time.Second, "the restarted node to catch up", func() bool {
		for _, id := range ids {
			if _, err := c.get(leader, user, id, true); err != nil {
				return false
			}
		}
		return true
	})
	c.waitHealthy(leader, 60*time.Second, "a healthy cluster after the restart")
	waitFor(t, 30*time.Second, "coalesced heartbeats between the restarted node and the others", func() bool {
		return counterValue(t, leader.metrics.heartbeatBatches) > 0 && counterValue(t, leader.metrics.heartbeatsReceived) > 0 &&
			counterValue(t, others[0].metrics.heartbeatsReceived) > before
	})
}

func TestHeartbeatWireRoundTrip(t *testing.T) {
	req := raft.AppendEntriesRequest{
		RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("n1"), Addr: []byte("127.0.0.1:7481")},
		Term:      7, Leader: []byte("127.0.0.1:7481"), PrevLogEntry: 1 << 40, PrevLogTerm: 6, LeaderCommitIndex: 1<<40 - 3,
	}
	b := beginFrame(nil, 2)
	b = appendHeartbeatRequest(b, 42, 3, &req)
	b = appendHeartbeatRequest(b, 43, MetaGroup-2, &raft.AppendEntriesRequest{Term: 1})
	b = endFrame(b)
	var buf []byte
	d, n, err := readFrame(bytes.NewReader(b), &buf)
	if err != nil || n != 2 {
		t.Fatalf("readFrame: %d items, %v", n, err)
	}
	it := d.request()
	if it.seq != 42 || it.group != 3 || !reflect.DeepEqual(it.req, req) {
		t.Fatalf("request 1: got %d/%d %+v", it.seq, it.group, it.req)
	}
	it = d.request()
	if it.seq != 43 || it.group != MetaGroup-2 || !reflect.DeepEqual(it.req, raft.AppendEntriesRequest{Term: 1}) || d.err != nil || len(d.b) != 0 {
		t.Fatalf("request 2: got %d/%d %+v, err %v, %d bytes left", it.seq, it.group, it.req, d.err, len(d.b))
	}

	resp := raft.AppendEntriesResponse{RPCHeader: raft.RPCHeader{ProtocolVersion: 3, ID: []byte("n2"), Addr: []byte("a:1")},
		Term: 9, LastLog: 1 << 50, Success: true, NoRetryBackoff: true}
	b = endFrame(appendHeartbeatResponse(beginFrame(nil, 1), 44, "boom", &resp))
	d, n, err = readFrame(bytes.NewReader(b), &buf)
	if err != nil || n != 1 {
		t.Fatalf("readFrame: %d items, %v", n, err)
	}
	if rep := d.response(); rep.seq != 44 || rep.err != "boom" || !reflect.DeepEqual(rep.resp, resp) || d.err != nil {
		t.Fatalf("response: got %+v, err %v", rep, d.err)
	}

	// A truncated frame is an error, not a panic or a zero request.
	d = &frameDecoder{b: appendHeartbeatRequest(nil, 1, 1, &req)[:20]}
	if d.request(); d.err == nil {
		t.Fatal("truncated request decoded without error")
	}
}

// The wire format carries every field of raft's AppendEntries request and response: a hashicorp/raft upgrade that
// adds one must extend heartbeatwire.go, or coalesced heartbeats would silently drop it.
func TestHeartbeatWireCoversRaftFields(t *testing.T) {
	fields := func(v any) []string {
		var names []string
		ty := reflect.TypeOf(v)
		for i := 0; i < ty.NumField(); i++ {
			names = append(names, ty.Field(i).Name)
		}
		return names
	}
	want := map[string][]string{
		"RPCHeader":             {"ProtocolVersion", "ID", "Addr"},
		"AppendEntriesRequest":  {"RPCHeader", "Term", "Leader", "PrevLogEntry", "PrevLogTerm", "Entries", "LeaderCommitIndex"},
		"AppendEntriesResponse": {"RPCHeader", "Term", "LastLog", "Success", "NoRetryBackoff"},
	}
	got := map[string][]string{
		"RPCHeader":             fields(raft.RPCHeader{}),
		"AppendEntriesRequest":  fields(raft.AppendEntriesRequest{}),
		"AppendEntriesResponse": fields(raft.AppendEntriesResponse{}),
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("raft's AppendEntries types changed: got %v, the heartbeat wire format knows %v", got, want)
	}
}
