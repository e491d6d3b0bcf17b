package retrieval

import (
	"context"
	"path"
	"slices"
	"sort"
)

// A fan-out query (Query.AllUsers) searches every user of a shard that the caller may see: each user's memories
// are ranked by the same hybrid search as a one-user query, and the shard returns the K best across them. The
// coordinator merges the shards' answers the same way. Users are searched one by one because the vector index is
// partitioned per user (the partition is what keeps one tenant's vectors out of another's search); the cost is
// linear in the shard's matching users, which an agent filter narrows first.

// UsersMatch reports whether user matches one of patterns (path.Match); no patterns match every user.
func UsersMatch(patterns []string, user string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if ok, _ := path.Match(p, user); ok {
			return true
		}
	}
	return false
}

// searchAcross runs q for each matching user of the shard and keeps the K best.
func (s *ShardIndex) searchAcross(ctx context.Context, q Query) ([]Result, error) {
	var out []Result
	for _, u := range s.fanoutUsers(&q) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		one := q
		one.AllUsers, one.UserPatterns, one.UserID = false, nil, u
		res, err := s.Search(ctx, one)
		if err != nil {
			return nil, err
		}
		out = MergeResults(q.K, out, res)
	}
	return out, nil
}

// fanoutUsers lists, sorted, the shard's users that q's patterns admit and that hold at least one memory passing
// q's agent and run filters (so an agent-wide query skips users the agent never wrote for).
func (s *ShardIndex) fanoutUsers(q *Query) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var users []string
	for u := range s.tl.users {
		if UsersMatch(q.UserPatterns, u) {
			users = append(users, u)
		}
	}
	if q.AgentID != "" || q.RunID != "" {
		has := map[string]bool{}
		for _, a := range s.attrs {
			if (q.AgentID == "" || a.agent == q.AgentID) && (q.RunID == "" || a.run == q.RunID) {
				has[a.user] = true
			}
		}
		users = slices.DeleteFunc(users, func(u string) bool { return !has[u] })
	}
	sort.Strings(users)
	return users
}

// MergeResults merges ranked result lists into the k best by score (ties: user, then id, so every coordinator
// orders a fan-out answer the same way).
func MergeResults(k int, lists ...[]Result) []Result {
	var all []Result
	for _, l := range lists {
		all = append(all, l...)
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if a.Memory.UserID != b.Memory.UserID {
			return a.Memory.UserID < b.Memory.UserID
		}
		return a.Memory.ID < b.Memory.ID
	})
	if len(all) > k {
		all = all[:k]
	}
	return all
}
