package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"
)

// cluster is the shard's replicas and the network between them.
type cluster struct {
	reps []*replica
	net  *Network
	log  *slog.Logger
	dir  string // snapshot stores; removed by close
}

func newCluster(n, spares int, opts Options, wrap wrapFSM) (*cluster, error) {
	log := opts.Logger
	dir, err := os.MkdirTemp("", "memcluster-sim-*")
	if err != nil {
		return nil, fmt.Errorf("snapshot dir: %w", err)
	}
	c := &cluster{net: newNetwork(), log: log, dir: dir}
	var ts []*transport
	for i := 0; i < n+spares; i++ {
		r, err := openReplica(i, c.net, log, dir)
		if err != nil {
			c.close()
			return nil, err
		}
		c.reps = append(c.reps, r)
		ts = append(ts, r.trans)
	}
	connect(ts)
	for _, r := range c.reps[:n] { // spares start empty, outside the group, until a move adds them
		if err := r.bootstrap(n, opts.ForceMonotonic); err != nil {
			c.close()
			return nil, err
		}
	}
	for _, r := range c.reps {
		if err := r.start(log, wrap, opts.ForceMonotonic); err != nil {
			c.close()
			return nil, err
		}
	}
	return c, nil
}

// leader returns a replica that believes it leads, nil if none does. Two may believe it during a partition; the
// stale one fails the client's operation, which then retries.
func (c *cluster) leader() *replica {
	for _, r := range c.reps {
		if r.isLeader() {
			return r
		}
	}
	return nil
}

// waitLeader returns a leader that committed a barrier in its term, so it is usable for reads.
func (c *cluster) waitLeader(ctx context.Context) (*replica, error) {
	for {
		if l := c.leader(); l != nil && wait(ctx, l.raft.Barrier(futureTimeout)) == nil {
			return l, nil
		}
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNoLeader, err)
		}
	}
}

// converge waits, on a healed network, until every replica has the leader's whole log and applied all of it.
func (c *cluster) converge(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	l, err := c.waitLeader(ctx)
	if err != nil {
		return err
	}
	for {
		if c.settled(l) {
			return nil
		}
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			if stuck := c.stuckAfterSnapshot(); stuck != "" {
				return fmt.Errorf("%w: %w: %s; %s", ErrNoConvergence, ErrRaft697, c.progress(), stuck)
			}
			return fmt.Errorf("%w: %s", ErrNoConvergence, c.progress())
		}
	}
}

func (c *cluster) settled(l *replica) bool {
	last := l.raft.LastIndex()
	for _, r := range c.members() {
		if r.raft.LastIndex() != last || r.raft.AppliedIndex() != last {
			return false
		}
	}
	return true
}

func (c *cluster) progress() string {
	s := ""
	for _, r := range c.reps {
		st := r.raft.Stats()
		s += fmt.Sprintf(" n%d[%s term=%s last=%d commit=%d applied=%d snapshot=%s]", r.id, r.raft.State(), st["term"],
			r.raft.LastIndex(), r.raft.CommitIndex(), r.raft.AppliedIndex(), st["last_snapshot_index"])
	}
	return s
}

// stuckAfterSnapshot recognises the state hashicorp/raft#697 leaves a follower in (see DESIGN.md): it installed a
// snapshot, raft emptied its log but kept the old last index, and it now applies nothing past the snapshot while
// its commit index says there is more.
func (c *cluster) stuckAfterSnapshot() string {
	var leaderLast uint64
	for _, r := range c.reps {
		if r.isLeader() {
			leaderLast = r.raft.LastIndex()
		}
	}
	for _, r := range c.reps {
		snap, err := strconv.ParseUint(r.raft.Stats()["last_snapshot_index"], 10, 64)
		applied := r.raft.AppliedIndex()
		if err == nil && !r.isLeader() && applied == snap && (r.raft.CommitIndex() > applied || leaderLast > applied) {
			return fmt.Sprintf("n%d is stuck at its snapshot %d below the leader's %d", r.id, snap, leaderLast)
		}
	}
	return ""
}

// halted reports a replica whose state machine stopped; in this harness every entry is valid, so it is a failure.
func (c *cluster) halted() error {
	var errs []error
	for _, r := range c.reps {
		select {
		case err := <-r.halt:
			errs = append(errs, fmt.Errorf("%w: n%d: %v", ErrHalted, r.id, err))
		default:
		}
	}
	return errors.Join(errs...)
}

// stopRaft shuts every raft group down at once (in parallel: a stopping node's peers would otherwise wait out
// RPC timeouts to it); the DBs, log stores and snapshot stores stay readable.
func (c *cluster) stopRaft() {
	c.net.Close()
	var wg sync.WaitGroup
	for _, r := range c.reps {
		if r.raft == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.raft.Shutdown().Error(); err != nil {
				c.log.Warn("raft shutdown", "node", r.id, "err", err)
			}
		}()
	}
	wg.Wait()
}

func (c *cluster) close() {
	c.stopRaft()
	for _, r := range c.reps {
		if err := r.db.Close(); err != nil {
			c.log.Warn("close db", "node", r.id, "err", err)
		}
	}
	if err := os.RemoveAll(c.dir); err != nil {
		c.log.Warn("remove snapshot dir", "err", err)
	}
}
