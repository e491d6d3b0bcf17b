package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// Replica moves, as cluster's shard leaders carry them out (cluster/reconcile.go): a spare replica joins as a
// non-voter, catches up by log or snapshot, is promoted to voter, and only then is an old voter removed — under
// the same network faults as everything else. The removed replica keeps running outside the group and is the
// next move's spare, so a later move also re-adds a replica that holds an old copy of the state.

// plannedMove is when a move starts and which voter (an index into the voters at that time) it replaces.
type plannedMove struct {
	at     time.Duration
	victim int
}

// moveSlack mirrors cluster's catchUpSlack: how far a non-voter may trail and still be promoted.
const moveSlack = 16

func planMoves(rng *rand.Rand, count int, steps []step) []plannedMove {
	out := make([]plannedMove, count)
	for i := range out {
		out[i] = plannedMove{at: momentIn(rng, steps), victim: rng.IntN(maxNodes)}
	}
	slices.SortFunc(out, func(a, b plannedMove) int { return int(a.at - b.at) })
	return out
}

// configuration is the group's membership as the current leader knows it (nil when none leads).
func (c *cluster) configuration() []raft.Server {
	l := c.leader()
	if l == nil {
		return nil
	}
	f := l.raft.GetConfiguration()
	if f.Error() != nil {
		return nil
	}
	return f.Configuration().Servers
}

// members are the replicas in the group (voters and non-voters); every replica when no leader answers.
func (c *cluster) members() []*replica {
	servers := c.configuration()
	if servers == nil {
		return c.reps
	}
	var out []*replica
	for _, r := range c.reps {
		if slices.ContainsFunc(servers, func(s raft.Server) bool { return s.ID == serverID(r.id) }) {
			out = append(out, r)
		}
	}
	return out
}

// mover carries out the planned moves, each retried through leader changes until ctx ends.
type mover struct {
	c      *cluster
	mu     sync.Mutex
	events []string
	start  time.Time
	voters int // the replication the moves keep
}

func (m *mover) logf(format string, a ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, fmt.Sprintf("%6s %s", since(m.start), fmt.Sprintf(format, a...)))
}

func (m *mover) run(ctx context.Context, moves []plannedMove) {
	for _, pm := range moves {
		if sleepCtx(ctx, time.Until(m.start.Add(pm.at))) != nil {
			return
		}
		m.move(ctx, pm.victim)
	}
}

// move runs one move to the end or until ctx ends; it is safe to run again on a half-done move.
func (m *mover) move(ctx context.Context, victimPick int) {
	spare, victim := "", ""
	for ctx.Err() == nil {
		l, err := m.c.waitLeader(ctx)
		if err != nil {
			return
		}
		servers := l.raft.GetConfiguration()
		if servers.Error() != nil {
			continue
		}
		cfg := servers.Configuration().Servers
		voters, nonvoter := voterIDs(cfg)
		if spare == "" {
			spare, victim = m.pick(cfg, voters, victimPick)
			if spare == "" {
				return
			}
			m.logf("move: n%s replaces n%s", spare[1:], victim[1:])
		}
		done, err := m.step(ctx, l, raft.ServerID(spare), raft.ServerID(victim), voters, nonvoter)
		if done {
			m.logf("move: n%s replaced n%s", spare[1:], victim[1:])
			return
		}
		if err != nil {
			_ = sleepCtx(ctx, 5*time.Millisecond)
		}
	}
}

// pick chooses the spare (a replica outside the group) and the victim (a voter other than the spare).
func (m *mover) pick(cfg []raft.Server, voters []raft.ServerID, victimPick int) (spare, victim string) {
	for _, r := range m.c.reps {
		if !slices.ContainsFunc(cfg, func(s raft.Server) bool { return s.ID == serverID(r.id) }) {
			spare = string(serverID(r.id))
			break
		}
	}
	if spare == "" || len(voters) == 0 {
		return "", ""
	}
	return spare, string(voters[victimPick%len(voters)])
}

// step takes the next step of the move on leader l; done reports the move complete.
func (m *mover) step(ctx context.Context, l *replica, spare, victim raft.ServerID,
	voters []raft.ServerID, nonvoters []raft.ServerID) (done bool, err error) {
	switch {
	case !slices.Contains(voters, spare) && !slices.Contains(nonvoters, spare):
		return false, wait(ctx, l.raft.AddNonvoter(spare, raft.ServerAddress(spare), 0, futureTimeout))
	case slices.Contains(nonvoters, spare):
		if m.c.byID(spare).raft.AppliedIndex()+moveSlack < l.raft.AppliedIndex() {
			return false, sleepCtx(ctx, 2*time.Millisecond)
		}
		return false, wait(ctx, l.raft.AddVoter(spare, raft.ServerAddress(spare), 0, futureTimeout))
	case slices.Contains(voters, victim) && victim == serverID(l.id):
		// A leader never removes itself (raft would shut it down): it hands over first, as cluster's does.
		return false, wait(ctx, l.raft.LeadershipTransfer())
	case slices.Contains(voters, victim):
		return false, wait(ctx, l.raft.RemoveServer(victim, 0, futureTimeout))
	}
	return true, nil
}

func (c *cluster) byID(id raft.ServerID) *replica {
	for _, r := range c.reps {
		if serverID(r.id) == id {
			return r
		}
	}
	return nil
}

func voterIDs(cfg []raft.Server) (voters, nonvoters []raft.ServerID) {
	for _, s := range cfg {
		if s.Suffrage == raft.Voter {
			voters = append(voters, s.ID)
		} else {
			nonvoters = append(nonvoters, s.ID)
		}
	}
	return voters, nonvoters
}

// finish completes a move the schedule interrupted, on the healed network: a non-voter left in the group is
// promoted once caught up, then voters beyond the replication are removed, so the group ends with its
// replication factor of voters.
func (m *mover) finish(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		l, err := m.c.waitLeader(ctx)
		if err != nil {
			return fmt.Errorf("finish moves: %w", err)
		}
		f := l.raft.GetConfiguration()
		if f.Error() == nil {
			voters, nonvoters := voterIDs(f.Configuration().Servers)
			switch {
			case len(nonvoters) > 0:
				if m.c.byID(nonvoters[0]).raft.AppliedIndex()+moveSlack >= l.raft.AppliedIndex() {
					_ = wait(ctx, l.raft.AddVoter(nonvoters[0], raft.ServerAddress(nonvoters[0]), 0, futureTimeout))
				}
			case len(voters) > m.voters:
				victim := voters[0]
				if victim == serverID(l.id) {
					victim = voters[1]
				}
				m.logf("finish: removing n%s", string(victim)[1:])
				_ = wait(ctx, l.raft.RemoveServer(victim, 0, futureTimeout))
			default:
				return nil
			}
		}
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			return fmt.Errorf("finish moves: %w", err)
		}
	}
}
