package retrieval

import "runtime"

// Indexers bounds how many follower replicas of a node build full-text batches at once. A node shares one
// among its shards' indexes.
//
// A follower's full-text index serves stale reads only, and its batches are large (it lingers 5 s): without a
// bound, the ten or so shards a node follows each built a segment at the same moment, every core went to
// bleve, and the same node's raft groups — whose acknowledgements are on every write's path — waited behind
// them. Under 64 writing clients on two cores that was half of the cluster's p99 (docs/benchmarks.md,
// "Follower indexing takes turns"). Batches that wait for a turn grow, and a larger batch costs less a
// document. A leader's feeder never waits: linearizable reads wait for it. A follower waiting for a turn goes
// ahead at once when it is promoted, when a reader waits for it, or when it closes.
type Indexers struct{ sem chan struct{} }

// NewIndexers lets n followers' batches be built at once (at least 1).
func NewIndexers(n int) *Indexers { return &Indexers{sem: make(chan struct{}, max(n, 1))} }

// DefaultIndexers is half the cores Go may use (at least 1): the other half stays free for the write path.
func DefaultIndexers() *Indexers { return NewIndexers(runtime.GOMAXPROCS(0) / 2) }

// acquire waits for a turn for feeder f's batch. It returns false without one when the batch needs none: no
// Indexers, or f is urgent (it leads, a reader waits for it, or it is closing), also when that happens during
// the wait, which f's urgent channel announces.
func (g *Indexers) acquire(f *textFeeder) bool {
	if g == nil {
		return false
	}
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
