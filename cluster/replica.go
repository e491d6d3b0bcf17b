package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/retrieval"
	"github.com/memcluster/memcluster/storage"
)

// ShardIndex is what a replica needs of its derived indexes: fed by the FSM, searched by reads.
type ShardIndex interface {
	storage.Indexer
	Search(ctx context.Context, q retrieval.Query) ([]retrieval.Result, error)
	// WaitIndexed returns once the indexes reflect every change up to the shard's applied index.
	WaitIndexed(ctx context.Context, applied uint64) error
	// SetLeader tells the indexes the replica's role, so a follower can batch index work more.
	SetLeader(leader bool)
	// Memories is how many memory records the indexes hold, for status.
	Memories() int
	// Unsearchable is how many memories have no vector of the index's model (re-embedding work).
	Unsearchable() int
	Close() error
}

// IndexFactory opens the indexes of one shard replica.
type IndexFactory func(shard uint32) (ShardIndex, error)

// Replica is this node's replica of one shard: its Raft group, state machine and indexes.
type Replica struct {
	Shard uint32
	FSM   *storage.ShardFSM
	Index ShardIndex

	raft  *raft.Raft
	trans raftTransport
	wait  *peerWaitTransport // its waits for a refusing peer end before raft's Shutdown
	log   *slog.Logger

	// readable is true while this replica leads and has applied a barrier in its current term: only then does
	// its commit index cover every write acknowledged by earlier leaders.
	readable atomic.Bool
	notify   chan bool
	stop     chan struct{}
	once     sync.Once
	wg       sync.WaitGroup
}

func (r *Replica) watchLeadership() {
	defer r.wg.Done()
	var gen atomic.Uint64
	for {
		select {
		case <-r.stop:
			return
		case leader := <-r.notify:
			g := gen.Add(1)
			r.readable.Store(false)
			if r.Index != nil {
				r.Index.SetLeader(leader)
			}
			if leader {
				go r.becomeReadable(&gen, g)
			}
		}
	}
}

// becomeReadable applies a barrier in the new term and then lets linearizable reads in. A barrier that fails
// while this replica still leads in the same leadership (one aborted by a user snapshot restore, as a cluster
// restore does) is tried again: giving up left the leader refusing every linearizable read for its whole term.
func (r *Replica) becomeReadable(gen *atomic.Uint64, g uint64) {
	for gen.Load() == g && r.IsLeader() {
		err := futureErrorWithin(r.raft.Barrier(10*time.Second), raftChangeWait, r.stop)
		if err == nil {
			if gen.Load() == g {
				r.readable.Store(true)
			}
			return
		}
		r.log.Warn("leader barrier failed; trying again", "err", err)
		select {
		case <-r.stop:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// IsLeader reports whether this replica leads its shard.
func (r *Replica) IsLeader() bool { return r.raft.State() == raft.Leader }

// Leader returns the leader's node id, empty when unknown.
func (r *Replica) Leader() string {
	_, id := r.raft.LeaderWithID()
	return string(id)
}

// Apply proposes a command and waits until it is committed and applied here.
func (r *Replica) Apply(ctx context.Context, cmd []byte) (storage.ApplyResult, error) {
	timeout := 10 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	f := r.raft.Apply(cmd, timeout)
	if err := futureError(ctx, f); err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) { // taken, not answered
			return storage.ApplyResult{}, fmt.Errorf("%w: %v", ErrOutcomeUnknown, err)
		}
		return storage.ApplyResult{}, mapRaftErr(err)
	}
	res, _ := f.Response().(storage.ApplyResult)
	if res.Err != nil {
		return res, res.Err
	}
	return res, nil
}

// futureError is f.Error() for no longer than ctx. Raft's futures take no context (Apply's timeout bounds only
// the enqueue), and a leader that keeps its lease but cannot commit (its followers refusing its entries) would hold
// the caller, and whoever waits on it, for good. An entry abandoned this way may still commit, as after any
// timeout.
func futureError(ctx context.Context, f raft.Future) error {
	if ctx.Done() == nil {
		return f.Error()
	}
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("waiting for raft: %w", ctx.Err())
	}
}

// raftChangeWait bounds how long the node's own loops (reconcile, membership changes, meta proposals) wait for a
// raft entry to commit before going on: the next reconcile looks again at what the group holds.
const raftChangeWait = 10 * time.Second

// futureErrorWithin is futureError for no longer than d, or than stop stays open.
func futureErrorWithin(f raft.Future, d time.Duration, stop <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return futureError(ctx, f)
}

// waitRaft is how the node's own loops wait for a raft entry: raftChangeWait at most, and no longer than the node
// runs, so that Stop, which waits for reconcile, never waits for a change that cannot commit.
func (n *Node) waitRaft(f raft.Future) error { return futureErrorWithin(f, raftChangeWait, n.stop) }

func mapRaftErr(err error) error {
	switch {
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipLost),
		errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return fmt.Errorf("%w: %v", ErrNotLeader, err)
	case errors.Is(err, raft.ErrRaftShutdown):
		return ErrStopped
	}
	return err
}

// ReadBarrier returns once this replica's state reflects every write acknowledged before the call: it must lead,
// confirm its leadership with a quorum, and have applied its commit index (the read-index protocol).
func (r *Replica) ReadBarrier(ctx context.Context) error {
	if err := r.waitReadable(ctx); err != nil {
		return err
	}
	idx := r.raft.CommitIndex()
	if err := futureError(ctx, r.raft.VerifyLeader()); err != nil {
		return mapRaftErr(err)
	}
	return r.waitApplied(ctx, idx)
}

// leaderBarrier is ReadBarrier without the quorum's confirmation and the wait for the commit index: this replica
// leads as far as it knows and has applied a barrier in its term. Its applied state then holds every write it or
// an earlier leader acknowledged (a write is acknowledged once the leader has applied it); the commit index adds
// only writes not acknowledged yet. A deposed leader that has not noticed passes it too, so what is read after
// it may miss writes a newer leader acknowledged (see Unconfirmed).
func (r *Replica) leaderBarrier(ctx context.Context) error { return r.waitReadable(ctx) }

// waitReadable waits until this replica leads and has applied a barrier in its term.
func (r *Replica) waitReadable(ctx context.Context) error {
	if !r.IsLeader() {
		return ErrNotLeader
	}
	for !r.readable.Load() {
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			return fmt.Errorf("leader not ready for reads: %w", err)
		}
		if !r.IsLeader() {
			return ErrNotLeader
		}
	}
	return nil
}

// waitApplied waits until raft has applied idx; raft's applied index, not the FSM's: noop and barrier entries
// never reach the FSM.
func (r *Replica) waitApplied(ctx context.Context, idx uint64) error {
	for r.raft.AppliedIndex() < idx {
		if err := sleepCtx(ctx, time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

// Configuration returns the shard's current raft membership.
func (r *Replica) Configuration() ([]raft.Server, error) {
	f := r.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, err
	}
	return f.Configuration().Servers, nil
}

// members lists the group's voters and non-voters, sorted.
func (r *Replica) members() (voters, nonvoters []string) {
	servers, err := r.Configuration()
	if err != nil {
		return nil, nil
	}
	for _, s := range servers {
		if s.Suffrage == raft.Voter {
			voters = append(voters, string(s.ID))
		} else {
			nonvoters = append(nonvoters, string(s.ID))
		}
	}
	sort.Strings(voters)
	sort.Strings(nonvoters)
	return voters, nonvoters
}

// Shutdown stops the replica's raft group and indexes.
func (r *Replica) Shutdown() error {
	var err error
	r.once.Do(func() {
		close(r.stop)
		// An apply blocked on a failing disk must give up first: raft's Shutdown waits for the apply loop.
		r.FSM.Stop()
		err = r.shutdownRaft()
		r.trans.Close()
		r.wg.Wait()
		if r.Index != nil {
			if cerr := r.Index.Close(); err == nil {
				err = cerr
			}
		}
	})
	return err
}

func (r *Replica) shutdownRaft() error { return stopGroup(r.raft, r.wait, r.trans, r.log) }

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
