package retrieval

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memcluster/memcluster/fulltext"
)

// textFeeder batches full-text updates off the apply path. Indexing each raft batch as its own bleve batch
// makes one segment per write and a merge storm; the feeder coalesces whatever arrived while the previous
// batch was being indexed. Reads that must see every applied write call waitIndexed, which flushes at once.
type textFeeder struct {
	text TextIndex
	gate *Indexers // the node's turns to build a batch; nil: none
	fail func(error)

	mu      sync.Mutex
	cond    *sync.Cond
	puts    []fulltext.Doc
	dels    []string
	pending uint64 // highest applied index handed in
	indexed uint64 // highest applied index whose changes bleve has
	waiters int
	closed  bool
	left    int         // documents close left unindexed (closeFlushMax)
	leader  atomic.Bool // the replica leads: a shorter linger
	kick    chan struct{}
	urgent  chan struct{} // a reader waits or the feeder closes: cut a linger or a turn's wait short; a promotion cuts a linger
	done    chan struct{}
}

// How long an update waits for company before it is indexed when no reader is waiting for it (a reader that
// needs it, waitIndexed, cuts the wait short). Followers answer only stale reads, so they batch much more: bleve's
// cost is mostly per batch (a segment each, its term dictionaries, then merges), and every replica indexes every
// write. Under 64 writing clients bleve was a third of the cluster's CPU with 250 ms on leaders (docs/benchmarks.md).
const (
	feederLinger         = time.Second
	followerFeederLinger = 5 * time.Second
)

func newTextFeeder(text TextIndex, indexed uint64, gate *Indexers, fail func(error)) *textFeeder {
	f := &textFeeder{text: text, gate: gate, fail: fail, indexed: indexed, pending: indexed,
		kick: make(chan struct{}, 1), urgent: make(chan struct{}, 1), done: make(chan struct{})}
	f.cond = sync.NewCond(&f.mu)
	go f.run()
	return f
}

func (f *textFeeder) add(applied uint64, puts []fulltext.Doc, dels []string) {
	f.mu.Lock()
	before := len(f.puts) + len(f.dels)
	// Within one accumulation the later change of an id wins, whatever order apply writes puts and deletes in:
	// a forgotten user imported again (same ids) must end indexed, a memory put and then deleted must end deleted.
	if len(puts) > 0 && len(f.dels) > 0 {
		put := make(map[string]bool, len(puts))
		for _, d := range puts {
			put[d.ID] = true
		}
		f.dels = slices.DeleteFunc(f.dels, func(id string) bool { return put[id] })
	}
	if len(dels) > 0 && len(f.puts) > 0 {
		del := make(map[string]bool, len(dels))
		for _, id := range dels {
			del[id] = true
		}
		f.puts = slices.DeleteFunc(f.puts, func(d fulltext.Doc) bool { return del[d.ID] })
	}
	f.puts = append(f.puts, puts...)
	f.dels = append(f.dels, dels...)
	f.pending = max(f.pending, applied)
	f.gate.addPending(len(f.puts) + len(f.dels) - before)
	f.mu.Unlock()
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

func (f *textFeeder) run() {
	defer close(f.done)
	for range f.kick {
		f.linger()
		f.mu.Lock()
		puts, dels, upto := f.puts, f.dels, f.pending
		f.puts, f.dels = nil, nil
		closed := f.closed
		f.mu.Unlock()
		left := 0 // changes close left unindexed, to the next open
		if len(puts)+len(dels) > 0 {
			var err error
			if left, err = f.apply(puts, dels, upto); err != nil {
				// As for any failed batch: the marker stays behind, and the next open re-feeds what bleve missed.
				f.fail(err)
			}
		}
		f.gate.addPending(-(len(puts) + len(dels))) // indexed, failed (fail reports it) or left to the next open
		f.mu.Lock()
		if left == 0 {
			f.indexed = max(f.indexed, upto)
		} else {
			f.left = left
		}
		f.cond.Broadcast()
		f.mu.Unlock()
		if closed || left > 0 { // left > 0 only when close stopped the batch
			return
		}
	}
}

// closeFlushMax bounds the backlog close still indexes (beside the chunk of a batch already being written):
// applyChunked, stopped by closing, writes only a last chunk, up to feederChunk changes. A
// larger one (a follower's under a bulk load: tens of thousands of documents a shard, indexed shard after shard)
// held a node's shutdown past memnode's 20 s bound, after which the store was closed under the replicas still
// applying. It is left to the next open instead, as after a crash: it re-feeds bleve from the raft log's tail
// after the marker when the log still holds it, else from every record (DESIGN.md, "Restart"); so is the rest
// of a batch that close interrupts between chunks.
const closeFlushMax = feederChunk

// feederChunk bounds one bleve batch (bleve's own limit is 4096 operations).
const feederChunk = 2048

// apply writes what accumulated (applyChunked) in its turn of the node's Indexers, at their lower priority, or
// at once and at the process's priority when it may not wait (a reader waits, or the feeder closes). It returns
// the changes left unwritten when the feeder closed before the last chunk (the marker then was not written).
func (f *textFeeder) apply(puts []fulltext.Doc, dels []string, upto uint64) (int, error) {
	left := 0
	write := func() (err error) {
		left, err = applyChunked(f.text, puts, dels, upto, f.closing)
		return err
	}
	if f.gate.acquire(f) {
		defer f.gate.release()
		err := f.gate.build(len(puts)+len(dels), write)
		return left, err
	}
	err := write()
	return left, err
}

// closing reports whether close was called.
func (f *textFeeder) closing() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// applyChunked writes puts and dels in bounded chunks; the applied-index marker goes with the last chunk only, so a
// crash between chunks leaves the marker behind and the next open re-feeds from Pebble. No id may be in both.
// Between chunks it stops once stop returns true (nil: never), and returns how many changes it left unwritten.
func applyChunked(text TextIndex, puts []fulltext.Doc, dels []string, upto uint64, stop func() bool) (int, error) {
	for len(puts)+len(dels) > feederChunk {
		if stop != nil && stop() {
			return len(puts) + len(dels), nil
		}
		var p []fulltext.Doc
		var d []string
		if len(puts) > 0 {
			n := min(len(puts), feederChunk)
			p, puts = puts[:n], puts[n:]
		} else {
			d, dels = dels[:feederChunk], dels[feederChunk:]
		}
		if err := text.ApplyWithMarkers(p, d, nil); err != nil {
			return 0, err
		}
	}
	return 0, text.ApplyWithMarkers(puts, dels, map[string][]byte{markerApplied: u64(upto)})
}

// linger waits up to the role's linger for more updates, unless a reader is waiting or the feeder is closing.
// A stale wake-up left in urgent only ends one linger early.
func (f *textFeeder) linger() {
	f.mu.Lock()
	urgent := f.waiters > 0 || f.closed
	f.mu.Unlock()
	if urgent {
		return
	}
	d := followerFeederLinger
	if f.leader.Load() {
		d = feederLinger
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-f.urgent:
	}
}

// urgentNow reports whether the next batch may not wait for a turn: a reader waits for the feeder, or it is
// closing. A leader's batch takes its turn like a follower's (Indexers): no reader waits for it yet.
func (f *textFeeder) urgentNow() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.waiters > 0 || f.closed
}

// hurry ends the current linger, or a wait for a turn if the feeder has become urgent (urgentNow).
func (f *textFeeder) hurry() {
	select {
	case f.urgent <- struct{}{}:
	default:
	}
}

// setLeader records the replica's role (its linger, linger); a promoted follower's linger ends at once.
func (f *textFeeder) setLeader(leader bool) {
	if !f.leader.Swap(leader) && leader {
		f.hurry()
	}
}

// waitIndexed returns once bleve holds every change up to applied index idx. Entries without index changes
// (raft configuration, barriers) never reach the feeder, so the target is the highest index handed in at or
// below idx: the caller's read barrier guarantees every change up to idx has been handed in already.
func (f *textFeeder) waitIndexed(ctx context.Context, idx uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	idx = min(idx, f.pending)
	if f.indexed >= idx {
		return nil
	}
	stop := context.AfterFunc(ctx, func() {
		f.mu.Lock()
		f.cond.Broadcast()
		f.mu.Unlock()
	})
	defer stop()
	f.waiters++
	defer func() { f.waiters-- }()
	f.hurry()
	for f.indexed < idx && ctx.Err() == nil && !f.closed {
		select {
		case f.kick <- struct{}{}:
		default:
		}
		f.cond.Wait()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if f.indexed < idx { // closed first: close may leave a backlog to the next open
		return errFeederClosed
	}
	return nil
}

// errFeederClosed answers a reader whose changes a closing feeder left unindexed.
var errFeederClosed = errors.New("full-text index closed before it caught up")

// close flushes what is pending, up to closeFlushMax documents, and stops the feeder. It returns how many
// documents it left unindexed, to the next open.
func (f *textFeeder) close() int {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return 0
	}
	f.closed = true
	f.mu.Unlock()
	f.hurry()
	// Non-blocking: if a kick is already pending the feeder will see closed when it takes it, and if the feeder
	// already saw closed and returned, a blocking send into a full buffer would wait forever.
	select {
	case f.kick <- struct{}{}:
	default:
	}
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	// Changes added after the feeder's last batch (none should be: the state machine stops first) go too.
	if n := len(f.puts) + len(f.dels); n > 0 {
		f.gate.addPending(-n)
		f.left += n
		f.puts, f.dels = nil, nil
	}
	f.cond.Broadcast()
	return f.left
}
