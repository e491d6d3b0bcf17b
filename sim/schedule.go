package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// A schedule is a list of fault steps drawn from the seed alone: the same seed gives the same steps, groups,
// links, delays and durations. Only "isolate the leader" resolves its target when it runs, because who leads is
// decided by raft's timing; the event log names the node it picked.

type stepKind uint8

const (
	stepHeal          stepKind = iota // no cuts
	stepPartition                     // two groups, cut both ways between them
	stepBridge                        // two groups cut from each other; one node still talks to both
	stepOneWay                        // random directed links cut in one direction only
	stepIsolateLeader                 // whoever leads when the step starts is cut off both ways
	stepDelay                         // no cuts, delays on every link
	stepKinds
)

type step struct {
	kind   stepKind
	faults Faults // cuts and delays; isolate-leader adds its cuts when it runs
	dur    time.Duration
	desc   string
}

// maxDelay bounds a link's added delay: below the 50ms election timeout, so delays alone slow raft down and
// reorder its traffic without forcing elections on every step.
const maxDelay = 30 * time.Millisecond

func planSchedule(rng *rand.Rand, n, count int) []step {
	steps := make([]step, count)
	for i := range steps {
		s := step{kind: stepKind(rng.IntN(int(stepKinds))), dur: time.Duration(60+rng.IntN(190)) * time.Millisecond}
		switch s.kind {
		case stepHeal:
			s.desc = "heal"
		case stepPartition:
			perm := rng.Perm(n)
			k := 1 + rng.IntN(n-1)
			cutBetween(&s.faults, perm[:k], perm[k:])
			s.desc = fmt.Sprintf("partition %v|%v", sorted(perm[:k]), sorted(perm[k:]))
		case stepBridge:
			perm := rng.Perm(n)
			rest := perm[1:]
			half := len(rest) / 2
			cutBetween(&s.faults, rest[:half], rest[half:])
			s.desc = fmt.Sprintf("bridge n%d between %v|%v", perm[0], sorted(rest[:half]), sorted(rest[half:]))
		case stepOneWay:
			s.desc = "one-way" + cutOneWay(rng, &s.faults, n)
		case stepIsolateLeader:
			s.desc = "isolate leader"
		case stepDelay:
			s.desc = "delay"
		}
		if s.kind == stepDelay || rng.IntN(3) == 0 {
			s.desc += addDelays(rng, &s.faults, n)
		}
		steps[i] = s
	}
	return steps
}

func cutBetween(f *Faults, a, b []int) {
	for _, x := range a {
		for _, y := range b {
			f.Cut[x][y], f.Cut[y][x] = true, true
		}
	}
}

func cutOneWay(rng *rand.Rand, f *Faults, n int) string {
	var links []string
	for a := 0; a < n; a++ {
		for b := 0; b < n; b++ {
			if a != b && rng.IntN(4) == 0 {
				f.Cut[a][b] = true
				links = append(links, fmt.Sprintf("%d->%d", a, b))
			}
		}
	}
	return " " + strings.Join(links, " ")
}

func addDelays(rng *rand.Rand, f *Faults, n int) string {
	var worst time.Duration
	for a := 0; a < n; a++ {
		for b := 0; b < n; b++ {
			if a != b {
				f.Delay[a][b] = time.Duration(rng.Int64N(int64(maxDelay)))
				worst = max(worst, f.Delay[a][b])
			}
		}
	}
	return fmt.Sprintf(" +delays<=%v", worst.Round(time.Millisecond))
}

func sorted(xs []int) []int {
	out := slices.Clone(xs)
	slices.Sort(out)
	return out
}

// runSchedule applies the steps in order, then heals. It returns what it did, with times since start.
func runSchedule(ctx context.Context, c *cluster, steps []step, start time.Time) []string {
	var events []string
	for _, s := range steps {
		f, desc := s.faults, s.desc
		if s.kind == stepIsolateLeader {
			desc += isolateLeader(c, &f)
		}
		c.net.Set(f)
		events = append(events, fmt.Sprintf("%6s %s for %v", since(start), desc, s.dur))
		if sleepCtx(ctx, s.dur) != nil {
			break
		}
	}
	c.net.Heal()
	return append(events, fmt.Sprintf("%6s heal", since(start)))
}

func isolateLeader(c *cluster, f *Faults) string {
	l := c.leader()
	if l == nil {
		return " (none leads: no-op)"
	}
	for j := range c.reps {
		if j != l.id {
			f.Cut[l.id][j], f.Cut[j][l.id] = true, true
		}
	}
	return fmt.Sprintf(" (n%d)", l.id)
}

func since(start time.Time) string {
	return time.Since(start).Round(time.Millisecond).String()
}
