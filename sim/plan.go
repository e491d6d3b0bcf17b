package sim

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// PCG streams: each kind of decision draws from its own stream of the seed, so adding a draw to one (say, a new
// fault kind) does not reshuffle the others.
const (
	streamTopology = iota + 1
	streamFaults
	streamOps
	streamMoves
	streamDisk
)

type plannedOp struct {
	in    input
	think time.Duration // pause before issuing the operation
}

// plan is everything a seed decides, made before the cluster starts.
type plan struct {
	nodes   int // voters
	spares  int // replicas outside the group at the start (one when the run has moves)
	moves   []plannedMove
	disk    []plannedDiskFault
	users   []string
	steps   []step
	clients [][]plannedOp
}

func makePlan(o Options) plan {
	p := plan{nodes: o.Nodes}
	if p.nodes == 0 {
		p.nodes = []int{3, 5}[rand.New(rand.NewPCG(o.Seed, streamTopology)).IntN(2)]
	}
	for u := 0; u < o.Users; u++ {
		p.users = append(p.users, fmt.Sprintf("user%d", u))
	}
	if o.Moves > 0 {
		p.spares = 1
	}
	p.steps = planSchedule(rand.New(rand.NewPCG(o.Seed, streamFaults)), p.nodes+p.spares, o.Steps)
	p.moves = planMoves(rand.New(rand.NewPCG(o.Seed, streamMoves)), o.Moves, p.steps)
	p.disk = planDiskFaults(rand.New(rand.NewPCG(o.Seed, streamDisk)), o.DiskFaults, p.steps)
	p.clients = planOps(rand.New(rand.NewPCG(o.Seed, streamOps)), o.Clients, o.OpsPerClient, p.users)
	return p
}

// planOps draws every client's operations. Clients are planned round-robin so that deletes can target ids that
// other clients put at about the same point in their lists: some deletes race their put, most find it.
func planOps(rng *rand.Rand, clients, perClient int, users []string) [][]plannedOp {
	pool := map[string][]string{} // ids planned so far, per user
	out := make([][]plannedOp, clients)
	for i := 0; i < perClient; i++ {
		for c := range out {
			u := users[rng.IntN(len(users))]
			op := plannedOp{in: input{User: u, Req: fmt.Sprintf("c%d.%03d", c, i)}, think: time.Duration(rng.IntN(10)) * time.Millisecond}
			switch r := rng.IntN(100); {
			case r < 40:
				op.in.Kind = opPut
				for j := range 1 + rng.IntN(2) {
					op.in.IDs = append(op.in.IDs, fmt.Sprintf("c%d.%03d.%d", c, i, j))
				}
				pool[u] = append(pool[u], op.in.IDs...)
			case r < 97 && r >= 75 && len(pool[u]) > 0:
				op.in.Kind = opDelete
				recent := pool[u][max(0, len(pool[u])-6):]
				for range 1 + rng.IntN(2) {
					op.in.IDs = append(op.in.IDs, recent[rng.IntN(len(recent))])
				}
			case r >= 97:
				op.in.Kind = opDeleteUser
			default:
				op.in.Kind = opGet
			}
			out[c] = append(out[c], op)
		}
	}
	return out
}

// momentIn draws a moment within the schedule of steps (the same draw moves have always made).
func momentIn(rng *rand.Rand, steps []step) time.Duration {
	var total time.Duration
	for _, s := range steps {
		total += s.dur
	}
	return time.Duration(rng.Int64N(int64(max(total, time.Millisecond))))
}

func (p plan) describe() []string {
	out := []string{fmt.Sprintf("%d replicas (+%d spare), %d clients x %d ops on %d users", p.nodes, p.spares, len(p.clients), len(p.clients[0]), len(p.users))}
	for _, m := range p.moves {
		out = append(out, fmt.Sprintf("move at %v (victim pick %d)", m.at.Round(time.Millisecond), m.victim))
	}
	for _, d := range p.disk {
		out = append(out, fmt.Sprintf("disk fault at %v for %v", d.at.Round(time.Millisecond), d.dur.Round(time.Millisecond)))
	}
	for _, s := range p.steps {
		out = append(out, fmt.Sprintf("%s for %v", s.desc, s.dur))
	}
	return out
}
