package retrieval

import (
	"slices"
	"time"
)

// episodeSupportLocked gives each candidate EpisodeSupport × the sum of the EpisodeTop best base scores of
// the other candidates of its episode. The caller holds s.mu for reading.
func (r *pipelineRun) episodeSupportLocked(list []*pcand) {
	p := r.p
	tl := r.s.tl.users[r.q.UserID]
	if tl == nil || p.EpisodeSupport <= 0 || p.EpisodeTop <= 0 {
		return
	}
	starts := map[string]string{}
	byEp := map[string][]float64{}
	key := make([]string, len(list))
	for i, c := range list {
		key[i] = tl.episodeStart(c.id, p.EpisodeGap, starts)
		byEp[key[i]] = append(byEp[key[i]], c.base)
	}
	for k, v := range byEp {
		slices.SortFunc(v, cmpDesc)
		byEp[k] = v[:min(len(v), p.EpisodeTop+1)]
	}
	for i, c := range list {
		if key[i] == "" {
			continue
		}
		sum, skipped := 0.0, false
		for _, b := range byEp[key[i]] {
			if !skipped && b == c.base {
				skipped = true // the memory's own score is not its support
				continue
			}
			sum += b
		}
		if !skipped && len(byEp[key[i]]) > p.EpisodeTop {
			sum -= byEp[key[i]][p.EpisodeTop]
		}
		c.ep = p.EpisodeSupport * sum
	}
}

// episodeStart is the first id of id's episode: the nearest episode start at or before it when gap is the one
// the timeline keeps starts for, else walkEpisodeStart's answer; "" when id is not in the timeline.
func (tl *timeline) episodeStart(id string, gap time.Duration, seen map[string]string) string {
	if gap != episodeGap {
		return tl.walkEpisodeStart(id, gap, seen)
	}
	// Membership by the entries (the same ids as tl.ids): a hash look-up, not a binary search of a large user's
	// ids, whose compares each missed the CPU's caches (3.7 % of a shard leader's CPU under 8 clients at 100k).
	if _, ok := tl.entries[id]; !ok {
		return ""
	}
	j, in := slices.BinarySearch(tl.starts, id)
	if in {
		return id
	}
	return tl.starts[j-1] // ids[0] is a start and sorts first, so j > 0
}

// walkEpisodeStart is the first id of id's episode (walking back while consecutive occurred-at times are at
// most gap apart), memoised in seen; "" when id is not in the timeline.
func (tl *timeline) walkEpisodeStart(id string, gap time.Duration, seen map[string]string) string {
	if s, ok := seen[id]; ok {
		return s
	}
	i, ok := slices.BinarySearch(tl.ids, id)
	if !ok {
		return ""
	}
	var walked []string
	start := id
	for ; i >= 0; i-- {
		cur := tl.ids[i]
		if s, ok := seen[cur]; ok {
			start = s
			break
		}
		walked, start = append(walked, cur), cur
		if i == 0 {
			break
		}
		a, b := tl.entries[tl.ids[i-1]], tl.entries[cur]
		if a == nil || b == nil || absDur(b.occurred.Sub(a.occurred)) > gap {
			break
		}
	}
	for _, w := range walked {
		seen[w] = start
	}
	return start
}
