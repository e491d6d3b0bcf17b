package retrieval

import (
	"errors"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/memcluster/memcluster/internal/threadprio"
)

// Indexers bounds how many of a node's replicas build full-text batches or write their vectors' checkpoints at
// once (inTurn), leaders' and followers'. A node shares one among its shards' indexes.
//
// Building a batch (analysis, then a segment's dictionaries and postings) is long and all CPU, and Go preempts
// a running goroutine only every 10 ms: when bleve held both cores, each of the many goroutine hand-offs on a
// put's path (HTTP, raft's loop, replicators, the log's fsync, the state machine) could wait that long. The
// ten or so shards a node follows built their 5 s batches at the same moment, and the five or so it leads
// their 1 s ones. With one turn on two cores the cluster's put p99 under 64 writing clients fell by a half
// for followers' turns alone, and by a quarter more in 5 s runs (an eighth in 30 s runs) once leaders took
// turns too, with throughput within the noise (docs/benchmarks.md, "Follower indexing takes turns", "Every
// full-text batch takes a turn"). A batch waiting for its turn keeps the next one growing, and a larger batch
// costs less a document. No read waits for a turn: a feeder whose reader waits (a linearizable search, on the
// leader) or that closes goes ahead at once, also while it waits.
//
// A batch built in a turn runs on a thread of its own, BuildNicer nice steps below the process (Linux): where
// threads compete for cores, the kernel hands them to the others whenever they are runnable and the batch takes
// what they leave. Inside one process that is only the threads without a Go P (back from a system call: the
// log's fsync, the network), since the batch's thread keeps its P while descheduled; between processes sharing
// cores (the benchmark's three nodes on two cores) it is all of them. There, under 64 writing clients, the put
// p99 fell by 15 % at the median of 19 A/B pairs, and linearizable searches beside the writes were no slower
// (docs/benchmarks.md, "Batches built at a lower priority"). A batch that goes ahead without a turn (a reader
// waits for it), or that has gathered more than lowBatchMax changes, is built at the process's priority; a
// reader that arrives while a batch is built waits for it at the lower priority.
//
// Inside one process the lowered thread still holds its P, so memnode runs one P more than its cores for each
// turn (its --gomaxprocs): the write path then keeps every core while a batch is built (1.26× the puts/s under 64
// writing clients on two cores; docs/benchmarks.md, "One P more than the cores, by default").
type Indexers struct {
	sem     chan struct{}
	waiting atomic.Int64 // batches waiting for a turn now
	waited  atomic.Int64 // nanoseconds batches have waited for turns, in all
	nice    atomic.Int64 // the nice value of the last batch's thread; lowered records whether it was below the process's
	lowered atomic.Bool
	behind  int // a batch of more changes than this is built at the process's priority (lowBatchMax)
	// The vectors' checkpoints written by the node's replicas (checkpoint.go): how many, how long they took and
	// their bytes. Every replica of a shard reaches the same applied index at about the same moment, so a
	// node's checkpoints and its peers' come together; these show when.
	ckpts, ckptNanos, ckptBytes atomic.Int64
	// pending counts the changes the node's feeders hold for bleve: gathered, or in a batch being built.
	pending atomic.Int64
}

// lowBatchMax bounds how far a replica's full-text index can fall behind while the write path starves its
// lowered builds: a batch that has gathered more changes than this (at 100 puts/s a shard, over a minute's)
// is built in its turn at the process's priority.
const lowBatchMax = 4 * feederChunk

// BuildNicer is how many nice steps below the process a batch built in a turn runs. A thread at nice 10
// weighs about a tenth of one at nice 0 in the kernel's fair share, so indexing still progresses under a
// saturated write path (and the turns' waits, exported, show when it does not keep up).
const BuildNicer = 10

// IndexersStats is what Indexers reports for metrics.
type IndexersStats struct {
	Waiting int64         // batches waiting for a turn now
	Waited  time.Duration // how long batches waited for turns, in all
	// Nice is the nice value of the thread that built the last batch in a turn, and Lowered whether it was
	// below the process's (false before the first batch, or where threads' priorities cannot be lowered).
	Nice    int
	Lowered bool
	// Checkpoints is how many vector checkpoints the node's replicas wrote, CheckpointTime how long they took in
	// all and CheckpointBytes their size in all.
	Checkpoints     int64
	CheckpointTime  time.Duration
	CheckpointBytes int64
	// Backlog is the changes the node's replicas hold for their full-text indexes now (Backlog).
	Backlog int64
}

// Stats reports the batches waiting now, the time waited so far and the checkpoints written; a nil Indexers
// reports zeros.
func (g *Indexers) Stats() IndexersStats {
	if g == nil {
		return IndexersStats{}
	}
	return IndexersStats{Waiting: g.waiting.Load(), Waited: time.Duration(g.waited.Load()),
		Nice: int(g.nice.Load()), Lowered: g.lowered.Load(), Checkpoints: g.ckpts.Load(),
		CheckpointTime: time.Duration(g.ckptNanos.Load()), CheckpointBytes: g.ckptBytes.Load(), Backlog: g.Backlog()}
}

// Backlog is how many changes (documents to index or delete) the node's replicas hold for their full-text
// indexes, gathered or in a batch being built; 0 for a nil Indexers. Under a bulk load the followers' lowered
// batches fell behind by tens of thousands of documents a shard, each held in memory until it is indexed:
// memnode refuses new writes above --overload-backlog (storage.DB.SetBacklog).
func (g *Indexers) Backlog() int64 {
	if g == nil {
		return 0
	}
	return g.pending.Load()
}

// addPending counts changes handed to a feeder (n > 0) or indexed or let go (n < 0); a nil Indexers counts
// nothing.
func (g *Indexers) addPending(n int) {
	if g != nil && n != 0 {
		g.pending.Add(int64(n))
	}
}

// wroteCheckpoint counts a checkpoint written in took, of size bytes; a nil Indexers counts nothing.
func (g *Indexers) wroteCheckpoint(took time.Duration, size int64) {
	if g == nil {
		return
	}
	g.ckpts.Add(1)
	g.ckptNanos.Add(int64(took))
	g.ckptBytes.Add(size)
}

// NewIndexers lets n batches be built at once (at least 1). A process that builds batches in turns runs best
// with n Ps more than its cores (see Indexers).
func NewIndexers(n int) *Indexers {
	return &Indexers{sem: make(chan struct{}, max(n, 1)), behind: lowBatchMax}
}

// DefaultTurns is how many batches a node of so many cores builds at once: half of them (at least 1), so that
// the other half stays free for the write path.
func DefaultTurns(cores int) int { return max(cores/2, 1) }

// DefaultIndexers lets DefaultTurns of the cores Go may use build at once.
func DefaultIndexers() *Indexers { return NewIndexers(DefaultTurns(runtime.GOMAXPROCS(0))) }

// acquire waits for a turn for feeder f's batch. It returns false without one when the batch needs none: no
// Indexers, or f is urgent (a reader waits for it, or it is closing), also when that happens during the wait,
// which f's urgent channel announces.
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

// inTurn runs fn, a replica's vector checkpoint, in a turn, unless stop closes first. A checkpoint encodes and
// writes every memory of its shard, and every replica of a node comes due at the same tick (a node's shards take
// the same load and open together, and the policy counts changes every replica counts alike): without turns a
// node's sixteen replicas wrote theirs at once, every 30 s under make bench's sessions, sixteen goroutines on
// the node's three Ps. In a turn, at the process's priority: it holds the index's read lock while it encodes a
// user, which applies wait for. A nil Indexers runs fn at once.
func (g *Indexers) inTurn(stop <-chan struct{}, fn func()) {
	if g == nil {
		fn()
		return
	}
	select {
	case g.sem <- struct{}{}:
	case <-stop:
		return
	}
	defer g.release()
	select {
	case <-stop: // both were ready: the close comes first
		return
	default:
	}
	fn()
}

// build runs fn, a batch of changes in its turn, on a new thread BuildNicer steps below the process's priority,
// or at the process's priority when the batch shows its index has fallen far behind (lowBatchMax).
func (g *Indexers) build(changes int, fn func() error) error {
	if changes > g.behind {
		nice, _ := threadprio.Nice()
		g.nice.Store(int64(nice))
		g.lowered.Store(false)
		return fn()
	}
	return g.buildOnNewThread(fn)
}

// buildOnNewThread runs fn through buildLowered in a new goroutine and waits for it.
func (g *Indexers) buildOnNewThread(fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- g.buildLowered(fn) }()
	return <-done
}

// buildLowered runs fn on the calling goroutine's thread, lowered BuildNicer steps, and leaves the goroutine
// locked to it: the thread ends with the goroutine, and its lowered priority with it. A thread a batch is cheap
// beside the batch. The main thread is not lowered (threadprio.ErrMainThread): held by this goroutine, it
// cannot take the goroutine buildOnNewThread starts, which so gets another thread.
func (g *Indexers) buildLowered(fn func() error) error {
	runtime.LockOSThread()
	nice, err := threadprio.Lower(BuildNicer)
	if errors.Is(err, threadprio.ErrMainThread) {
		defer runtime.UnlockOSThread()
		return g.buildOnNewThread(fn)
	}
	if err != nil {
		runtime.UnlockOSThread() // nothing was lowered: the thread may run other goroutines again
	}
	g.nice.Store(int64(nice))
	g.lowered.Store(err == nil)
	return fn()
}
