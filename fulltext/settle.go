package fulltext

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
)

// Settling (DESIGN.md, "Settling an idle index"): scorch's tiered merge policy leaves up to MaxSegmentsPerTier
// segments in each tier, which keeps merge work low under writes, and a search looks up each of its terms in
// every segment. An index that has taken no batch for Options.SettleAfter and holds more than
// Options.SettleAbove segments, or whose smaller segments hold Options.SettleShare of its documents, is merged
// down to a few, or to one.

// settleRounds bounds the merge plans one Settle runs: each merges up to ten segments into one.
const settleRounds = 4

// settleHoldDefault is Options.settleHold: far longer than a whole-index merge takes (seconds at 200,000
// memories), short enough that a merge scorch keeps retrying (a full disk) does not hold a node's turn for good.
const settleHoldDefault = 10 * time.Minute

// Settlers bounds how many indexes settle at once. A node shares one among its shards' indexes: after a burst
// of writes every shard goes idle together, and each settle is a merge of the whole index.
type Settlers struct {
	sem    chan struct{}
	active atomic.Int32
	peak   atomic.Int32 // the most settles seen at once (tests)
}

// NewSettlers lets n indexes settle at once (at least 1).
func NewSettlers(n int) *Settlers { return &Settlers{sem: make(chan struct{}, max(n, 1))} }

// acquire waits for a turn; nil Settlers bound nothing.
func (g *Settlers) acquire(ctx context.Context) error {
	if g == nil {
		return nil
	}
	select {
	case g.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	n := g.active.Add(1)
	for p := g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
	}
	return nil
}

func (g *Settlers) release() {
	if g != nil {
		g.active.Add(-1)
		<-g.sem
	}
}

// settler runs Settle once an index has been idle for its options' SettleAfter.
type settler struct {
	applies atomic.Uint64 // batches applied so far
	last    atomic.Int64  // when the last batch was applied, unix nanoseconds
	stopCtx context.CancelFunc
	wg      sync.WaitGroup
}

// startSettler starts ix's idle settling when its options ask for it and the index merges at all (scorch runs
// no merger without a path).
func (ix *Index) startSettler() {
	if ix.opts.InMemory || ix.opts.SettleAfter <= 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	ix.settle = &settler{stopCtx: cancel}
	ix.settle.last.Store(time.Now().UnixNano())
	ix.settle.wg.Go(func() { ix.settleLoop(ctx) })
}

// count is how many batches were applied (0 for an index that does not settle).
func (s *settler) count() uint64 {
	if s == nil {
		return 0
	}
	return s.applies.Load()
}

// applied notes a batch for the idle check.
func (s *settler) applied() {
	if s != nil {
		s.applies.Add(1)
		s.last.Store(time.Now().UnixNano())
	}
}

// cancel ends the loop and a Settle under way; Close calls it, then closes the index, then waits.
func (s *settler) cancel() {
	if s != nil {
		s.stopCtx()
	}
}

// wait returns once the loop has ended.
func (s *settler) wait() {
	if s != nil {
		s.wg.Wait()
	}
}

// settleLoop settles the index after each spell of writes, once it has been idle for SettleAfter, and once
// after it opens (an index reopened with many segments settles without a new batch). A settled index is not
// merged again until a batch comes. A Settle that fails (a merge scorch refused) is tried after the next spell.
func (ix *Index) settleLoop(ctx context.Context) {
	s, every := ix.settle, ix.opts.SettleAfter
	settledAt := uint64(math.MaxUint64)
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		idle := time.Since(time.Unix(0, s.last.Load()))
		if n := s.applies.Load(); n != settledAt && idle >= every {
			if ix.unsettled() {
				if err := ix.Settle(ctx); err != nil && ctx.Err() != nil {
					return
				}
			}
			settledAt = n
		}
		t.Reset(max(every-idle, every/4))
	}
}

// Settle merges the index's segments down to at most SettleAbove (a few merge plans, each merging up to ten
// segments into one), or returns when ctx ends or a batch comes between two rounds (the writes' own merges
// take over). It waits for a turn of Options.Settlers first. Searches and batches go on meanwhile: scorch merges in the background of its current snapshot.
func (ix *Index) Settle(ctx context.Context) error {
	sc := ix.scorch()
	if sc == nil {
		return nil
	}
	if !ix.unsettled() {
		return nil
	}
	applies := ix.settle.count()
	if err := ix.opts.Settlers.acquire(ctx); err != nil {
		return err
	}
	defer ix.opts.Settlers.release()
	ctx, cancel := context.WithTimeout(ctx, ix.opts.settleHold)
	defer cancel()
	opts := mergeplan.SingleSegmentMergePlanOptions
	opts.MaxSegmentSize = storeMaxSegmentSize
	for range settleRounds {
		if !ix.unsettled() || ctx.Err() != nil || ix.settle.count() != applies {
			return ctx.Err()
		}
		// forceMerge returns once scorch's merger has run the plan, the index closed, or ctx ended (Close, or
		// the settle's hold of its turn ran out).
		if err := forceMerge(ctx, sc, &opts); err != nil {
			return wrap("settle", err)
		}
		// The merged segment is introduced, then persisted: wait for the persisted root, so that the next
		// round plans over files.
		ix.waitPersisted(ctx)
	}
	return ctx.Err()
}

// unsettled reports whether the index holds more than SettleAbove segments on disk, or more than one with the
// smaller ones holding SettleShare of its documents.
func (ix *Index) unsettled() bool {
	files, _ := ix.Segments()
	switch {
	case files > uint64(ix.opts.SettleAbove):
		return true
	case files <= 1 || ix.opts.SettleShare < 0:
		return false
	}
	largest, total, err := ix.segmentDocs()
	return err == nil && total > 0 && float64(total-largest) >= ix.opts.SettleShare*float64(total)
}

// segmentDocs is the live documents of the index's largest segment, and of all of them.
func (ix *Index) segmentDocs() (largest, total uint64, err error) {
	adv, err := ix.b.Advanced()
	if err != nil {
		return 0, 0, err
	}
	r, err := adv.Reader()
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return 0, 0, nil
	}
	for _, s := range snap.Segments() {
		n := s.Count()
		largest, total = max(largest, n), total+n
	}
	return largest, total, nil
}

// forceMerge is scorch's ForceMerge, returning when ctx ends too: scorch's waits only for the merge or the
// index's close, and its merger retries a failing merge forever. Left behind, the call ends with the merger's
// next attempt (which sees ctx cancelled) or the index's close.
func forceMerge(ctx context.Context, sc *scorch.Scorch, opts *mergeplan.MergePlanOptions) error {
	done := make(chan error, 1)
	go func() { done <- sc.ForceMerge(ctx, opts) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
