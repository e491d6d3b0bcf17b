package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

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
// While a replica's indexes load, its state machine applies the first batch raft hands it to Pebble and then waits
// in Index for the load, so raft's apply loop waits there too; the group's log keeps taking appends. The load
// reads the records either before or after that batch, and the batch, indexed again after the load, changes
// nothing twice: indexing is by memory id (an upsert, a delete of what is absent). Searches and read waits on the
// replica wait for the load, within their contexts. A load that fails halts the replica, as an entry it cannot
// apply does: its indexes never saw the batches applied meanwhile, and their markers did not move past them, so
// the next open reads them again from the log's tail.

// loadingIndex stands in for a replica's indexes while they open.
type loadingIndex struct {
	done chan struct{} // closed when the load ended, loaded or not
	mu   sync.Mutex
	idx  ShardIndex // the loaded indexes; nil until then, and after a load that failed or was abandoned
	err  error
	// The role the replica was told while its indexes loaded, handed to them once they are.
	leader, leaderSet bool
}

func newLoadingIndex() *loadingIndex { return &loadingIndex{done: make(chan struct{})} }

// loadBehind loads the indexes of r, a replica whose group runs, into l. It waits for any other load of this
// node to end first (loadSem), and gives up if the replica stops before its turn. A load that fails halts the
// replica.
func (n *Node) loadBehind(r *Replica, l *loadingIndex) {
	n.metrics.indexesLoading.Inc()
	defer n.metrics.indexesLoading.Dec()
	queued := time.Now()
	select {
	case n.loadSem <- struct{}{}:
	case <-r.stop:
		l.finish(nil, fmt.Errorf("load indexes of shard %d: %w", r.Shard, ErrStopped))
		return
	}
	began := time.Now()
	idx, err := n.newIdx(r.Shard)
	<-n.loadSem
	if err != nil {
		err = fmt.Errorf("open indexes of shard %d: %w", r.Shard, err)
		l.finish(nil, err)
		n.haltReplica(r.Shard, err)
		return
	}
	l.finish(idx, nil)
	r.log.Info("indexes loaded behind the group", "queued_ms", began.Sub(queued).Milliseconds(),
		"load_ms", time.Since(began).Milliseconds())
}

func (l *loadingIndex) finish(idx ShardIndex, err error) {
	l.mu.Lock()
	l.idx, l.err = idx, err
	if idx != nil && l.leaderSet {
		idx.SetLeader(l.leader)
	}
	l.mu.Unlock()
	close(l.done)
}

// loaded returns the indexes without waiting: nil while they load, or when their load failed.
func (l *loadingIndex) loaded() ShardIndex {
	select {
	case <-l.done:
		return l.idx
	default:
		return nil
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

// Index waits for the load. Without indexes (a failed or abandoned load) the batch is dropped: the replica is
// halting or shutting down, and the next open reads the batch from the log's tail.
func (l *loadingIndex) Index(applied uint64, puts []memory.Memory, dels []storage.Ref) {
	<-l.done
	if l.idx != nil {
		l.idx.Index(applied, puts, dels)
	}
}

// Reset waits for the load, then rebuilds the indexes from the records a snapshot restore replaced.
func (l *loadingIndex) Reset() {
	<-l.done
	if l.idx != nil {
		l.idx.Reset()
	}
}

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

// indexesFailed is why the replica's indexes could not load (nil: they did, or still load, or it opened them
// before its group).
func (r *Replica) indexesFailed() error {
	l, ok := r.Index.(*loadingIndex)
	if !ok {
		return nil
	}
	select {
	case <-l.done:
		if l.idx == nil && !errors.Is(l.err, ErrStopped) {
			return l.err
		}
	default:
	}
	return nil
}

// indexesLoading reports whether the replica's indexes are still loading behind its group.
func (r *Replica) indexesLoading() bool {
	l, ok := r.Index.(*loadingIndex)
	if !ok {
		return false
	}
	select {
	case <-l.done:
		return false
	default:
		return true
	}
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
