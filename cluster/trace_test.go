package cluster

import (
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestTraceSpansCoordinatorAndShard checks that a write entering at a node that does not lead the shard yields
// one trace: the coordinator's shard.propose span and the leader's shard.propose.serve span under it.
func TestTraceSpansCoordinatorAndShard(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	cfg := testConfig()
	cfg.Tracer = tp.Tracer("test")
	c := makeCluster(t, 3, cfg)
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster")
	shard, _ := c.nodes[0].ShardFor(ctxFor(t, 30*time.Second), "tracy")
	var coord *testNode
	for _, tn := range c.nodes {
		if r, ok := tn.Replica(shard); ok && !r.IsLeader() {
			coord = tn
			break
		}
	}
	if _, err := c.put(coord, "tracy", "traced write"); err != nil {
		t.Fatal(err)
	}
	var clientTrace, serveTrace, serveParent string
	var clientSpan string
	for _, s := range rec.Ended() {
		switch s.Name() {
		case "shard.propose":
			clientTrace, clientSpan = s.SpanContext().TraceID().String(), s.SpanContext().SpanID().String()
		case "shard.propose.serve":
			serveTrace, serveParent = s.SpanContext().TraceID().String(), s.Parent().SpanID().String()
		}
	}
	if clientTrace == "" || serveTrace != clientTrace || serveParent != clientSpan {
		t.Fatalf("coordinator trace %s span %s; serving trace %s parent %s", clientTrace, clientSpan, serveTrace, serveParent)
	}
}
