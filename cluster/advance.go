package cluster

import (
	"context"
	"time"

	"github.com/memcluster/memcluster/storage"
)

// A replica placed again where one was dropped stays passive until its log reaches the last index its
// predecessor held (voteGuard). When the predecessor held entries past the commit that a later leader
// discarded, the group's log is shorter than that index, and a shard that takes no writes would leave the
// replica passive for good: a voter then that cannot vote, so one failure more could leave the shard without a
// leader and without a way to repair itself. advancePastDropped closes that: while the replica is caught up with
// its leader but short of the index, its node proposes entries that change nothing — a prune of request
// results made before 1970 — through the shard's leader, until the log gets there. Caught up means the replica
// holds and applied the highest commit index a leader sent it, and its log stayed put for two checks: a replica
// still waiting for its snapshot or its first entries is behind that commit index and proposes nothing.

const (
	// advanceEvery is how often the replica checks its log; it proposes only after two checks saw the log
	// unchanged and applied (the shard idle, the replica caught up).
	advanceEvery = time.Second
	// advanceBatch bounds the entries proposed after one check.
	advanceBatch = 64
	// advanceMaxGap is the most a replica proposes its way across. A discarded tail is at most what a leader
	// had in flight (hundreds of entries); a larger gap means something else is wrong, and the replica waits
	// for writes instead of filling the log with empty entries.
	advanceMaxGap = 100_000
)

// noopEntry is a shard command every build applies and that changes nothing: no request result was made
// before the Unix epoch's first millisecond.
func noopEntry() ([]byte, error) {
	return storage.EncodePrune(storage.PrunePayload{BeforeMS: 1, Max: 1})
}

// advancePastDropped runs beside a replica armed by a dropped marker (openRaft) until it has caught up with
// its predecessor or stops.
func (n *Node) advancePastDropped(r *Replica, g *voteGuard) {
	defer r.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-r.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	t := time.NewTicker(advanceEvery)
	defer t.Stop()
	var last uint64
	idle, said := 0, false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		held, now := g.held.Load(), r.raft.LastIndex()
		if !g.dropped.Load() || now >= held {
			return
		}
		if now != last || r.raft.AppliedIndex() < now || now < g.leaderCommit.Load() {
			last, idle = now, 0
			continue
		}
		if idle++; idle < 2 {
			continue
		}
		if r.Leader() == "" {
			continue
		}
		if held-now > advanceMaxGap {
			r.log.Warn("shard idle far short of what the dropped replica held: waiting for writes", "last", now, "held", held)
			return
		}
		if !said {
			r.log.Info("shard idle short of what the dropped replica held: proposing empty entries", "last", now, "held", held)
			said = true
		}
		n.proposeNoops(ctx, r, min(held-now, advanceBatch))
	}
}

// proposeNoops proposes count entries that change nothing through the shard's leader, stopping at an error.
func (n *Node) proposeNoops(ctx context.Context, r *Replica, count uint64) {
	cmd, err := noopEntry()
	if err != nil {
		r.log.Error("encode an empty entry", "err", err)
		return
	}
	for i := uint64(0); i < count; i++ {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := n.Propose(pctx, r.Shard, cmd)
		cancel()
		if err != nil {
			r.log.Debug("propose an empty entry", "err", err)
			return
		}
	}
}
