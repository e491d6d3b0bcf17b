package cluster

import (
	"context"
	"net/http"
	"time"

	"github.com/memcluster/memcluster/storage"
)

// Request results ('s' shard 'q' request id) let a retried delete or forget answer what its first application
// did. A shard's leader prunes those older than Config.RequestRetention with a CmdPrune entry (storage/prune.go):
// it picks the cutoff from its clock, so every replica deletes the same keys.
const (
	// pruneEveryMin and pruneEveryMax bound the interval between a leader's checks, a quarter of the retention:
	// with the default day a shard looks every 10 minutes (results then live at most retention + 10 min), and
	// however short a retention tests set, a shard proposes at most one prune a second.
	pruneEveryMin = time.Second
	pruneEveryMax = 10 * time.Minute
	// pruneBatch bounds the results one entry deletes (one Pebble batch on every replica); a leader with more
	// to prune proposes again at the next reconcile instead of waiting for the interval.
	pruneBatch = 10000
)

// pruneEvery is how often a shard's leader checks for request results to prune.
func pruneEvery(retention time.Duration) time.Duration {
	return min(max(retention/4, pruneEveryMin), pruneEveryMax)
}

// maybePrune, run by a shard's leader on each reconcile, proposes a prune when the interval has passed and the
// shard holds request results older than the retention. The check reads the shard's oldest result and nothing
// else in the usual case, so an idle shard costs one seek per interval and no raft entry. applies memoizes the
// members' answers for one reconcile round, so a member that does not answer delays the round once, not once
// per shard.
func (n *Node) maybePrune(r *Replica, applies map[string]bool) {
	now := time.Now()
	if now.Before(n.pruneAt[r.Shard]) {
		return
	}
	n.pruneAt[r.Shard] = now.Add(pruneEvery(n.cfg.RequestRetention))
	if n.db.WriteHealth() != nil {
		return // read-only: the node hands its leaderships away; the next leader prunes
	}
	cutoff := now.Add(-n.cfg.RequestRetention)
	ok, err := n.db.HasPrunable(r.Shard, cutoff)
	if err != nil {
		n.log.Warn("check request results to prune", "shard", r.Shard, "err", err)
		return
	}
	if !ok {
		return
	}
	if who := n.cannotApply(r, storage.CmdPrune, applies); who != "" {
		n.log.Info("not pruning request results: a member of the shard does not report applying prunes", "shard", r.Shard,
			"node", who)
		return
	}
	cmd, err := storage.EncodePrune(storage.PruneBefore(cutoff, pruneBatch))
	if err != nil {
		n.log.Error("encode prune", "shard", r.Shard, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := r.Apply(ctx, cmd)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		n.log.Warn("prune request results", "shard", r.Shard, "err", err)
		return
	}
	n.metrics.prunedResults.Add(float64(res.Deleted))
	n.log.Debug("pruned request results", "shard", r.Shard, "deleted", res.Deleted, "before", cutoff)
	if res.Deleted >= pruneBatch {
		delete(n.pruneAt, r.Shard) // more to do: again at the next reconcile
	}
}

// cannotApply returns a member of r's raft configuration that does not report applying command type t (an
// older build would halt on it), or that does not answer; "" when every member does. A rolling upgrade thus
// starts pruning once its last node runs this build. asked holds the answers already had this round.
func (n *Node) cannotApply(r *Replica, t storage.CommandType, asked map[string]bool) string {
	servers, err := r.Configuration()
	if err != nil {
		return n.cfg.NodeID
	}
	for _, s := range servers {
		id := string(s.ID)
		if id == n.cfg.NodeID {
			continue
		}
		ok, known := asked[id]
		if !known {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			var rep NodeReport
			err := n.call(ctx, http.MethodGet, n.httpAddrOf(id), internalPrefix+"node", nil, "", nil, &rep)
			cancel()
			ok = err == nil && rep.MaxCommand >= int(t)
			asked[id] = ok
		}
		if !ok {
			return id
		}
	}
	return ""
}
