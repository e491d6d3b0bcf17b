package server

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/tiering"
)

// Cluster-wide tier operations (no user_id): every shard at once, the users of each shard in order, all under
// the request's deadline. A shard that fails or runs out of time is named in missing_shards; the work it did
// finish is committed (each user's step is its own guarded transaction), so running again goes on from there.

// eachShard runs fn for every shard concurrently, each with the users holding memories there, and returns
// the shards that failed.
func (s *Server) eachShard(ctx context.Context, fn func(ctx context.Context, shard uint32, users []string) error) ([]apiv1.ShardFailure, error) {
	shards, err := s.c.ShardCount(ctx)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	var failed []apiv1.ShardFailure
	var wg sync.WaitGroup
	for i := range shards {
		shard := uint32(i)
		wg.Go(func() {
			users, err := s.c.ShardUsers(ctx, shard, false)
			if err == nil {
				err = fn(ctx, shard, users)
			}
			if err != nil {
				mu.Lock()
				failed = append(failed, apiv1.ShardFailure{Shard: shard, Error: err.Error()})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return failed, nil
}

// tierRunAll tiers every user of the cluster.
func (s *Server) tierRunAll(w http.ResponseWriter, r *http.Request, pol *tiering.Policy) {
	var mu sync.Mutex
	res := apiv1.TierRunResponse{Segments: []string{}}
	failed, err := s.eachShard(r.Context(), func(ctx context.Context, _ uint32, users []string) error {
		for _, u := range users {
			moved, keys, partial, err := s.tierUser(ctx, u, pol)
			mu.Lock()
			res.Users++
			res.Moved += moved
			res.Segments = append(res.Segments, keys...)
			mu.Unlock()
			if err != nil {
				return err
			}
			if partial {
				return fmt.Errorf("out of time at user %q: run again to go on", u)
			}
		}
		return nil
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	res.Partial, res.MissingShards = len(failed) > 0, sortFailures(failed)
	s.log.Info("tiered cluster", "users", res.Users, "moved", res.Moved, "segments", len(res.Segments),
		"missing_shards", len(failed))
	writeJSON(w, http.StatusOK, res)
}

// tierStatusAll sums every user's tier sizes per shard and type.
func (s *Server) tierStatusAll(w http.ResponseWriter, r *http.Request) {
	var mu sync.Mutex
	var shards []apiv1.ShardTiers
	failed, err := s.eachShard(r.Context(), func(ctx context.Context, shard uint32, users []string) error {
		st := apiv1.ShardTiers{Shard: shard, Users: len(users)}
		for _, u := range users {
			one, err := s.tierStatus(ctx, shard, u)
			if err != nil {
				return err
			}
			st.Types = addCounts(st.Types, one.Types)
		}
		mu.Lock()
		shards = append(shards, st)
		mu.Unlock()
		return nil
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := apiv1.TierStatusResponse{Types: []apiv1.TierCount{}, Partial: len(failed) > 0, MissingShards: sortFailures(failed)}
	sortByShard(shards)
	for _, st := range shards {
		out.Types = addCounts(out.Types, st.Types)
	}
	out.Shards = shards
	writeJSON(w, http.StatusOK, out)
}

// addCounts adds b's per-type counts into a, keeping memory.Types order.
func addCounts(a, b []apiv1.TierCount) []apiv1.TierCount {
	by := map[string]*apiv1.TierCount{}
	for _, l := range [][]apiv1.TierCount{a, b} {
		for _, c := range l {
			t := by[c.Type]
			if t == nil {
				t = &apiv1.TierCount{Type: c.Type}
				by[c.Type] = t
			}
			t.HotCount += c.HotCount
			t.HotBytes += c.HotBytes
			t.ColdCount += c.ColdCount
			t.ColdBytes += c.ColdBytes
			t.Archive += c.Archive
		}
	}
	out := []apiv1.TierCount{}
	for _, typ := range memory.Types {
		if t := by[string(typ)]; t != nil {
			out = append(out, *t)
		}
	}
	return out
}

func sortFailures(fs []apiv1.ShardFailure) []apiv1.ShardFailure {
	slices.SortFunc(fs, func(a, b apiv1.ShardFailure) int { return cmp.Compare(a.Shard, b.Shard) })
	return fs
}

func sortByShard(ss []apiv1.ShardTiers) {
	slices.SortFunc(ss, func(a, b apiv1.ShardTiers) int { return cmp.Compare(a.Shard, b.Shard) })
}
