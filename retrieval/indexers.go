package retrieval

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Indexers bounds how many follower replicas of a node build full-text batches at once. A node shares one
// among its shards' indexes.
//
// A follower's full-text index serves stale reads only, and its batches are large (it lingers 5 s): without a
// bound, the ten or so shards a node follows each built a segment at the same moment, every core went to
// bleve, and the same node's raft groups — whose acknowledgements are on every write's path — waited behind
// them. Under 64 writing clients on two cores turns cut the cluster's put p99 by a third to a half, for a
// higher p50 (docs/benchmarks.md, "follower indexing takes turns"). Batches that wait for a turn grow, and a
// larger batch costs less a document. A leader's feeder never waits: linearizable reads wait for it. A
// follower waiting for a turn goes ahead at once when it is promoted, when a reader waits for it, or when it
// closes.
type Indexers struct {
	sem     chan struct{}
	waiting atomic.Int64 // batches waiting for a turn now
	waited  atomic.Int64 // nanoseconds batches have waited for turns, in all
}

// IndexersStats is what Indexers reports for metrics.
type IndexersStats struct {
	Waiting int64         // follower batches waiting for a turn now
	Waited  time.Duration // how long follower batches waited for turns, in all
}

// Stats reports the batches waiting now and the time waited so far; a nil Indexers reports zeros.
func (g *Indexers) Stats() IndexersStats {
	if g == nil {
		return IndexersStats{}
	}
	return IndexersStats{Waiting: g.waiting.Load(), Waited: time.Duration(g.waited.Load())}
}

// NewIndexers lets n followers' batches be built at once (at least 1).
func NewIndexers(n int) *Indexers { return &Indexers{sem: make(chan struct{}, max(n, 1))} }

// DefaultIndexers is half the cores Go may use (at least 1): the other half stays free for the write path.
func DefaultIndexers() *Indexers { return NewIndexers(runtime.GOMAXPROCS(0) / 2) }

// acquire waits for a turn for feeder f's batch. It returns false without one when the batch needs none: no
// Indexers, or f is urgent (it leads, a reader waits for it, or it is closing), also when that happens during
// the wait, which f's urgent channel announces.
func (g *Indexers) acquire(f *textFeeder) bool {
	if g == nil || f.urgentNow() {
		return false
	}
	start := time.Now()
	g.waiting.Add(1)
	defer func() {
		g.waiting.Add(-1)
		g.waited.Add(int64(time.Since(start)))
	}()
	for !f.urgentNow() {
		select {
		case g.sem <- struct{}{}:
			return true
		case <-f.urgent:
		}
	}
	return false
}

func (g *Indexers) release() { <-g.sem }
