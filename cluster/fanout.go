package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/retrieval"
)

// DefaultShardTimeout is a fan-out's per-shard deadline when the caller states none.
const DefaultShardTimeout = 2 * time.Second

// SearchAll fans a query across users (q.AllUsers) out to every shard at once, each call under its own deadline
// of perShard (0: DefaultShardTimeout), and merges the answers into the K best. A shard that errs or misses its
// deadline is returned in failed — a partial answer is never passed off as a whole one. It fails outright only
// when the cluster has not formed or ctx itself ends.
func (n *Node) SearchAll(ctx context.Context, q retrieval.Query, stale bool, perShard time.Duration) (
	[]retrieval.Result, []apiv1.ShardFailure, error) {
	if !q.AllUsers {
		return nil, nil, errors.New("search all: not a query across users")
	}
	if perShard <= 0 {
		perShard = DefaultShardTimeout
	}
	shards, err := n.ShardCount(ctx)
	if err != nil {
		return nil, nil, err
	}
	results := make([][]retrieval.Result, shards)
	errs := make([]error, shards)
	var wg sync.WaitGroup
	for s := range shards {
		wg.Go(func() {
			sctx, cancel := context.WithTimeout(ctx, perShard)
			defer cancel()
			results[s], errs[s] = n.Search(sctx, uint32(s), q, stale)
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("search all: %w", err)
	}
	var failed []apiv1.ShardFailure
	for s, err := range errs {
		if err != nil {
			n.metrics.fanoutPartial.Inc()
			failed = append(failed, apiv1.ShardFailure{Shard: uint32(s), Error: err.Error()})
		}
	}
	return retrieval.MergeResults(q.K, results...), failed, nil
}

// formWait bounds how long an operator's request (a backup, a restore) waits for this node to apply the meta
// group's first entry before it is refused: a node that joined or restarted a moment ago gets there in a second
// or two, while a cluster that is not forming at all should be told so promptly.
const formWait = 15 * time.Second

// awaitFormed waits, up to formWait or ctx's deadline, until this node knows the cluster formed; else ErrRefused.
func (n *Node) awaitFormed(ctx context.Context) error {
	wctx, cancel := context.WithTimeout(ctx, formWait)
	defer cancel()
	if _, err := n.ShardCount(wctx); err != nil {
		return fmt.Errorf("%w: the cluster has not formed yet", ErrRefused)
	}
	return nil
}

// splitWait bounds how long a backup or a restore, which need the shard map to hold still, wait for a split
// under way to end: a node applies a split's end a moment after the meta leader does, so one sent just after a
// split finished elsewhere would otherwise be refused. Shorter than memctl's default timeout (10 s), so a
// longer split gets the refusal, not a timeout.
const splitWait = 5 * time.Second

// awaitNoSplit returns this node's meta state once no split is under way, waiting up to splitWait; else
// ErrRefused naming the split, or ctx's error if ctx ended first.
func (n *Node) awaitNoSplit(ctx context.Context) (MetaState, error) {
	wctx, cancel := context.WithTimeout(ctx, splitWait)
	defer cancel()
	_, _ = n.awaitMeta(wctx, func(st MetaState) (int, bool) { return 0, st.Split == nil })
	if err := ctx.Err(); err != nil {
		return MetaState{}, fmt.Errorf("wait for a split under way to end: %w", err)
	}
	st := n.meta.State()
	if st.Split != nil {
		return st, errorf(ErrRefused, "shard %d is splitting into %d; retry once the split is done", st.Split.Parent,
			st.Split.Child)
	}
	return st, nil
}

// ShardCount is the cluster's shard count, waiting (up to ctx's deadline) while the cluster forms.
func (n *Node) ShardCount(ctx context.Context) (int, error) {
	for {
		var shards int
		n.meta.read(func(s *MetaState) { shards = s.Shards })
		if shards > 0 {
			return shards, nil
		}
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return 0, fmt.Errorf("%w: cluster not formed yet", ErrNoLeader)
		}
	}
}
