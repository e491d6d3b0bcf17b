package cluster

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/memcluster/memcluster/internal/threadprio"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/retrieval"
	"github.com/memcluster/memcluster/storage"
)

// A restarted node used to open each replica's indexes (vectors, attributes, bleve) before starting its raft
// group, one shard after another, so a replica took no part in its group — no votes, no log appends, no quorum —
// until every shard before it had loaded: 17–21 s at a million memories on a loaded machine, while each group ran
// on two copies. The replicas a node held before its restart now start their groups at once, each with a
// loadingIndex in place of its indexes, and the indexes load behind them, one shard at a time (two at once gained
// nothing under load: the cores are busy with the catch-up).
//
// While a replica's indexes load, its state machine applies what raft commits to Pebble as usual and hands each
// batch's changes to the loadingIndex, which keeps them, in order, for the indexes (a snapshot restore's Reset
// too). It must not block there: raft's apply loop would stop, and after 128 queued batches so would the group's
// main loop on this replica, which would then acknowledge no appends and cast no votes (hashicorp/raft hands
// committed entries to a bounded queue inside its AppendEntries handler). Once loaded, the indexes take the kept
// changes before anything newer. The load reads the records at some point among those batches, so some of them
// are indexed twice, which changes nothing: indexing is by memory id (an upsert, a delete of what is absent), and
// the applied-index marks only move up. Beyond loadQueueMax kept memories the state machine does wait for the
// load (memory before liveness). Searches and read waits on the replica wait for the load, within their
// contexts. A load that fails halts the replica, as an entry it cannot apply does: its indexes never saw the
// batches applied meanwhile, and their markers did not move past them, so the next open reads them again from
// the log's tail.

// loadingIndex stands in for a replica's indexes while they open.
type loadingIndex struct {
	done chan struct{} // closed when the load ended, loaded or not
	mu   sync.Mutex
	idx  ShardIndex // the loaded indexes; nil until then, and after a load that failed or was abandoned
	err  error
	// The role the replica was told while its indexes loaded, handed to them once they are.
	leader, leaderSet bool
	// The state machine's changes while the indexes load, in order, and how many memories they carry.
	queue  []func(ShardIndex)
	queued int
}

// loadQueueMax bounds the memories a loading replica keeps for its indexes (about 1.3 KB each at 256 dimensions).
const loadQueueMax = 100_000

func newLoadingIndex() *loadingIndex { return &loadingIndex{done: make(chan struct{})} }

// loadBehind loads the indexes of r, a replica whose group runs, into l. It waits for any other load of this
// node to end first (loadSem), and gives up if the replica stops before its turn. A load that fails halts the
// replica.
func (n *Node) loadBehind(r *Replica, l *loadingIndex) {
	n.metrics.indexesLoading.Inc()
	defer n.metrics.indexesLoading.Dec()
	queued := time.Now()
	abandon := func() { l.finish(nil, fmt.Errorf("load indexes of shard %d: %w", r.Shard, ErrStopped)) }
	select {
	case n.loadSem <- struct{}{}:
	case <-r.stop:
		abandon()
		return
	case <-n.stop:
		abandon()
		return
	}
	if stopping(r.stop) || stopping(n.stop) { // select picks at random among ready cases
		<-n.loadSem
		abandon()
		return
	}
	began := time.Now()
	idx, err := openLowered(func() (ShardIndex, error) { return n.newIdx(r.Shard) })
	<-n.loadSem
	if err != nil {
		err = fmt.Errorf("open indexes of shard %d: %w", r.Shard, err)
		l.finish(nil, err)
		r.log.Error("indexes failed to load behind the group", "err", err)
		n.haltReplica(r.Shard, err)
		return
	}
	l.finish(idx, nil)
	r.log.Info("indexes loaded behind the group", "queued_ms", began.Sub(queued).Milliseconds(),
		"load_ms", time.Since(began).Milliseconds())
}

// openLowered runs open on a thread of its own, retrieval.BuildNicer steps below the process's priority (Linux;
// elsewhere, or where it cannot be lowered, at the process's), and returns what open returns. A restarted node
// loads its replicas' indexes while its groups and its peers serve writes: at a million memories, 16 shards one
// after another took 26 s of a core, and on hosts where nodes share cores (the benchmark's three on two) the
// peers' puts slowed by half meanwhile. The load serves nothing yet (searches on the replica wait for it, and a
// replica leading while it loads hands the leadership on), so it takes what the serving threads leave. Threads
// the open starts itself (the vectors' decoding beside the attributes', bleve's) keep the process's priority.
// The goroutine ends locked to its thread, so the thread ends with it (threadprio.Lower).
func openLowered(open func() (ShardIndex, error)) (ShardIndex, error) {
	done := make(chan openedIndex, 1)
	go func() { done <- openHereLowered(open) }()
	o := <-done
	return o.idx, o.err
}

type openedIndex struct {
	idx ShardIndex
	err error
}

// openHereLowered runs open on the calling goroutine's thread, lowered, and leaves the goroutine locked to it, as
// retrieval's batches are built (the thread ends with the goroutine). The main thread is not lowered
// (threadprio.ErrMainThread: memnode keeps it, a test binary may not): held by this goroutine, it cannot take the
// goroutine openLowered starts, which so gets another thread.
func openHereLowered(open func() (ShardIndex, error)) openedIndex {
	runtime.LockOSThread()
	_, err := threadprio.Lower(retrieval.BuildNicer)
	if errors.Is(err, threadprio.ErrMainThread) {
		defer runtime.UnlockOSThread()
		idx, err := openLowered(open)
		return openedIndex{idx, err}
	}
	if err != nil {
		runtime.UnlockOSThread() // nothing was lowered: the thread may run other goroutines again
	}
	idx, err := open()
	return openedIndex{idx, err}
}

// finish ends the load: the indexes take the changes kept meanwhile, in order, before done closes (Index waits
// on the lock for it), or the changes are dropped when there are no indexes.
func (l *loadingIndex) finish(idx ShardIndex, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.idx, l.err = idx, err
	if idx != nil {
		if l.leaderSet {
			idx.SetLeader(l.leader)
		}
		for _, apply := range l.queue {
			apply(idx)
		}
	}
	l.queue, l.queued = nil, 0
	close(l.done)
}

func stopping(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// keep queues a change for the indexes while they load and reports true, or reports false once they have (or
// the queue is full): the caller then waits for done and applies the change itself.
func (l *loadingIndex) keep(memories int, apply func(ShardIndex)) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if stopping(l.done) || l.queued+memories > loadQueueMax {
		return false
	}
	l.queue = append(l.queue, apply)
	l.queued += memories
	return true
}

// loaded returns the indexes without waiting: nil while they load, or when their load failed.
func (l *loadingIndex) loaded() ShardIndex {
	if stopping(l.done) {
		return l.idx
	}
	return nil
}

// apply keeps a change of the state machine for the indexes while they load, or once they have (or with the
// queue full) waits for them and applies it. Without indexes (a failed or abandoned load) the change is dropped:
// the replica is halting or shutting down, and the next open reads it from the log's tail.
func (l *loadingIndex) apply(memories int, change func(ShardIndex)) {
	if l.keep(memories, change) {
		return
	}
	<-l.done
	if l.idx != nil {
		change(l.idx)
	}
}

// wait returns the indexes once loaded, or why there are none.
func (l *loadingIndex) wait(ctx context.Context) (ShardIndex, error) {
	select {
	case <-l.done:
		return l.idx, l.err
	case <-ctx.Done():
		return nil, fmt.Errorf("indexes still loading: %w", ctx.Err())
	}
}

// Index hands the batch to the indexes in order (apply).
func (l *loadingIndex) Index(applied uint64, puts []memory.Memory, dels []storage.Ref) {
	l.apply(len(puts)+len(dels), func(idx ShardIndex) { idx.Index(applied, puts, dels) })
}

// Reset is kept in order like a batch: the loaded indexes rebuild from the records a snapshot restore replaced.
func (l *loadingIndex) Reset() { l.apply(0, func(idx ShardIndex) { idx.Reset() }) }

func (l *loadingIndex) Search(ctx context.Context, q retrieval.Query) ([]retrieval.Result, error) {
	idx, err := l.wait(ctx)
	if err != nil {
		return nil, err
	}
	return idx.Search(ctx, q)
}

func (l *loadingIndex) WaitIndexed(ctx context.Context, applied uint64) error {
	idx, err := l.wait(ctx)
	if err != nil {
		return err
	}
	return idx.WaitIndexed(ctx, applied)
}

func (l *loadingIndex) SetLeader(leader bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.idx != nil {
		l.idx.SetLeader(leader)
		return
	}
	l.leader, l.leaderSet = leader, true
}

// Memories is -1 (not known) until the indexes have loaded: a restore into a fresh cluster must not take a
// loading replica for an empty one.
func (l *loadingIndex) Memories() int {
	if idx := l.loaded(); idx != nil {
		return idx.Memories()
	}
	return -1
}

func (l *loadingIndex) Unsearchable() int {
	if idx := l.loaded(); idx != nil {
		return idx.Unsearchable()
	}
	return 0
}

// loadState reports, for a replica whose indexes load behind its group, whether the load ended and why it left
// no indexes (nil: loaded). A replica that opened its indexes before its group reports a load that ended well.
func (r *Replica) loadState() (ended bool, err error) {
	l, ok := r.Index.(*loadingIndex)
	if !ok {
		return true, nil
	}
	if stopping(l.done) {
		return true, l.err
	}
	return false, nil
}

// handsOn reports whether r leads while its indexes load and has another voter to hand the leadership to: it
// then refuses proposals and linearizable reads with ErrNotLeader, so that the coordinator retries on the next
// leader, instead of holding them until its indexes have loaded (readonly.go hands the leadership on).
func (r *Replica) handsOn() bool {
	if !r.IsLeader() || !r.indexesLoading() {
		return false
	}
	return r.otherVoter(r.Leader())
}

// indexesFailed is why the replica's indexes could not load (nil: they did, or still load, or its load was
// abandoned because it stopped).
func (r *Replica) indexesFailed() error {
	if _, err := r.loadState(); err != nil && !errors.Is(err, ErrStopped) {
		return err
	}
	return nil
}

// indexesLoading reports whether the replica's indexes are still loading behind its group.
func (r *Replica) indexesLoading() bool {
	ended, _ := r.loadState()
	return !ended
}

// Close waits for a load under way (an open cannot be interrupted; one not begun is abandoned when the replica's
// stop channel closes), then closes the indexes.
func (l *loadingIndex) Close() error {
	<-l.done
	if l.idx != nil {
		return l.idx.Close()
	}
	return nil
}
