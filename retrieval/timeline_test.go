package retrieval

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/memcluster/memcluster/memory"
)

// The episode starts a timeline keeps as memories come, change and go give every memory the episode that
// walking back through the timeline gives it.
func TestEpisodeStartsMatchTheWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for round := range 200 {
		tls := newTimelines()
		var live []string
		for step := range 1 + rng.IntN(60) {
			switch op := rng.IntN(10); {
			case op < 6 || len(live) == 0: // a new memory, anywhere in id order
				id := fmt.Sprintf("m%04d", rng.IntN(10000))
				if !slices.Contains(live, id) {
					live = append(live, id)
				}
				tls.noteLocked(memory.Memory{ID: id, UserID: "u", OccurredAt: t0.Add(time.Duration(rng.IntN(6*60)) * time.Minute)})
			case op < 8: // a memory put again with another time
				id := live[rng.IntN(len(live))]
				tls.noteLocked(memory.Memory{ID: id, UserID: "u", OccurredAt: t0.Add(time.Duration(rng.IntN(6*60)) * time.Minute)})
			default:
				i := rng.IntN(len(live))
				tls.forgetLocked("u", live[i])
				live = slices.Delete(live, i, i+1)
			}
			tl := tls.users["u"]
			if tl == nil {
				continue
			}
			walked := map[string]string{}
			for _, id := range append(slices.Clone(live), "absent") {
				got := tl.episodeStart(id, episodeGap, nil)
				if want := tl.walkEpisodeStart(id, episodeGap, walked); got != want {
					t.Fatalf("round %d step %d: episode of %s starts at %q, the walk says %q (ids %v, starts %v)",
						round, step, id, got, want, tl.ids, tl.starts)
				}
			}
		}
	}
}
