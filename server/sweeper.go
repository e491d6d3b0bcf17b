package server

import (
	"context"
	"encoding/json"
	"time"

	"github.com/memcluster/memcluster/consolidation"
	"github.com/memcluster/memcluster/storage"
)

// Sweeper is what the idle-session sweeper needs of the cluster: which shards this node leads, and a scan of
// its local copy of them. (cluster.Node provides both.)
type Sweeper interface {
	LeaderShards() []uint32
	ScanLocalSide(shard uint32, space byte, fn func(user, key string, value []byte) bool) error
	LocalUsers(shard uint32, fn func(user string) bool) error
}

// RunIdleSweeper ends, every interval, the working sessions idle past their TTL on the shards this node leads
// (trigger "idle"): what they hold is consolidated, as at an explicit end, so an agent that vanishes loses
// nothing. Only the shard leader sweeps, so a session is swept once; the end itself is the normal guarded
// transaction, so a session that became active meanwhile is not ended (it is re-read and no longer expired).
func (s *Server) RunIdleSweeper(ctx context.Context, c Sweeper, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.sweepOnce(ctx, c)
		}
	}
}

func (s *Server) sweepOnce(ctx context.Context, c Sweeper) int {
	now := s.opts.Now().UTC()
	type ref struct{ user, run string }
	var due []ref
	for _, shard := range c.LeaderShards() {
		err := c.ScanLocalSide(shard, storage.SpaceSessions, func(user, run string, v []byte) bool {
			if idleSession(v, now, s.opts.Model.Working) {
				due = append(due, ref{user, run})
			}
			return len(due) < 1000 // a bounded amount of work per sweep
		})
		if err != nil {
			s.log.Warn("idle sweep: scan sessions", "shard", shard, "err", err)
		}
	}
	ended := 0
	for _, d := range due {
		err := s.transactCtx(ctx, d.user, readsMemories, func(ctx context.Context, shard uint32, t *userTxn) error {
			rec, found, err := s.readSession(ctx, shard, t, d.run)
			if err != nil || !found || !rec.Session.Expired(t.now, s.opts.Model.Working) {
				return err // gone or active again: nothing to do
			}
			facts, err := s.readFacts(ctx, shard, t)
			if err != nil {
				return err
			}
			res, _, err := s.runSession(t, &rec, facts, "idle")
			if err == nil {
				s.countDecisions("idle", res.Facts)
				ended++
			}
			return err
		})
		if err != nil {
			s.log.Warn("idle sweep: end session", "user_id", d.user, "run_id", d.run, "err", err)
		}
	}
	if ended > 0 {
		s.log.Info("idle sessions consolidated", "sessions", ended)
	}
	return ended
}

// sessionActivity is what the sweeper reads of a stored session (sessionRecord): every session of every shard a
// node leads is looked at each sweep, and decoding each one's window of messages only to read a time
// allocated them all (BenchmarkSweepDecode).
type sessionActivity struct {
	Session struct {
		LastActive time.Time `json:"last_active"`
	} `json:"session"`
}

// idleSession reports whether the stored session v has been idle past its TTL at now; a value whose session
// time does not decode is left alone. (One whose time decodes but not the rest is found idle, and the end's own
// read then fails on it and logs why, each sweep: the server writes every session record whole.)
func idleSession(v []byte, now time.Time, opts consolidation.WorkingOptions) bool {
	var a sessionActivity
	if json.Unmarshal(v, &a) != nil {
		return false
	}
	sess := consolidation.Session{LastActive: a.Session.LastActive}
	return sess.Expired(now, opts)
}
