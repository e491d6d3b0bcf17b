package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// Disk faults: at a planned moment the replica that leads refuses to write its raft log for a while (its log
// store's StoreLogs fails and writes nothing), then writes again. Since the leader sends new entries to its
// followers while it writes them itself (third_party/raft/MEMCLUSTER.md), this is the path where followers hold
// entries their leader failed to write: the leader answers their futures with the error and steps down without
// applying them, and a later leader commits or overwrites them. If the leadership moved meanwhile, a follower
// refuses entries instead, which raft retries.

// plannedDiskFault is when a disk fault starts and how long the leader's log refuses writes.
type plannedDiskFault struct {
	at  time.Duration
	dur time.Duration
}

func planDiskFaults(rng *rand.Rand, count int, steps []step) []plannedDiskFault {
	out := make([]plannedDiskFault, count)
	for i := range out {
		out[i] = plannedDiskFault{at: momentIn(rng, steps), dur: 20*time.Millisecond + time.Duration(rng.Int64N(int64(130*time.Millisecond)))}
	}
	slices.SortFunc(out, func(a, b plannedDiskFault) int { return int(a.at - b.at) })
	return out
}

// faultyLogs is a replica's raft log store whose writes can be refused.
type faultyLogs struct {
	raft.LogStore
	refusing atomic.Bool
	refused  atomic.Int64 // writes refused, in all
}

func (f *faultyLogs) StoreLog(l *raft.Log) error { return f.StoreLogs([]*raft.Log{l}) }

func (f *faultyLogs) StoreLogs(logs []*raft.Log) error {
	if f.refusing.Load() {
		f.refused.Add(1)
		return ErrDiskFault
	}
	return f.LogStore.StoreLogs(logs)
}

// runDiskFaults refuses the log writes of the replica that leads at each planned moment, for the planned time,
// and returns what it did.
func runDiskFaults(ctx context.Context, c *cluster, faults []plannedDiskFault, start time.Time) []string {
	var events []string
	for _, f := range faults {
		if sleepCtx(ctx, time.Until(start.Add(f.at))) != nil {
			break
		}
		l := c.leader()
		if l == nil {
			events = append(events, fmt.Sprintf("%v: disk fault: no leader", time.Since(start).Round(time.Millisecond)))
			continue
		}
		before := l.logs.refused.Load()
		l.logs.refusing.Store(true)
		err := sleepCtx(ctx, f.dur)
		l.logs.refusing.Store(false)
		events = append(events, fmt.Sprintf("%v: n%d's raft log refused writes for %v (%d refused)",
			(f.at).Round(time.Millisecond), l.id, f.dur.Round(time.Millisecond), l.logs.refused.Load()-before))
		if err != nil {
			break
		}
	}
	return events
}
