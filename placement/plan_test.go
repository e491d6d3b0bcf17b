package placement

import (
	"fmt"
	"os"
	"slices"
	"testing"
)

// sim applies plans to a cluster the way the executor does: a moved shard's leader, if it left, becomes the
// shard's first replica; transfers happen as planned.
type sim struct {
	Cluster
	moves, transfers int
}

func newSim(nodes, zones, shards, replicas int) *sim {
	s := &sim{Cluster: Cluster{Replicas: replicas, Shards: make([][]string, shards), Leaders: make([]string, shards)}}
	for i := 0; i < nodes; i++ {
		s.join(i, zones)
	}
	return s
}

func (s *sim) join(i, zones int) {
	s.Nodes = append(s.Nodes, Node{ID: fmt.Sprintf("n%03d", i), Zone: fmt.Sprintf("z%d", i%zones), State: Alive})
}

func (s *sim) set(state State, match func(Node) bool) {
	for i, n := range s.Nodes {
		if match(n) {
			s.Nodes[i].State = state
		}
	}
}

// converge plans and applies until a plan changes nothing; it returns the number of plans.
func (s *sim) converge(t *testing.T, lim Limits) int {
	t.Helper()
	for round := 1; round <= 200; round++ {
		p := Next(s.Cluster, lim)
		if len(p.Moves) == 0 && len(p.Transfers) == 0 {
			return round
		}
		s.moves += len(p.Moves)
		s.transfers += len(p.Transfers)
		s.Shards = p.Placement
		for sh, reps := range s.Shards {
			if !slices.Contains(reps, s.Leaders[sh]) && len(reps) > 0 {
				s.Leaders[sh] = reps[0]
			}
		}
		for _, tr := range p.Transfers {
			if s.Leaders[tr.Shard] != tr.From {
				t.Fatalf("transfer of shard %d from %s, led by %s", tr.Shard, tr.From, s.Leaders[tr.Shard])
			}
			s.Leaders[tr.Shard] = tr.To
		}
	}
	t.Fatal("no convergence in 200 plans")
	return 0
}

// check asserts the goals and returns the replica and leader spreads (max - min over eligible nodes).
func (s *sim) check(t *testing.T) (replicaSpread, leaderSpread int) {
	t.Helper()
	zones := map[string]bool{}
	state, zone := map[string]State{}, map[string]string{}
	load, leads := map[string]int{}, map[string]int{}
	for _, n := range s.Nodes {
		state[n.ID], zone[n.ID] = n.State, n.Zone
		if n.State == Alive {
			zones[n.Zone], load[n.ID], leads[n.ID] = true, 0, 0
		}
	}
	for sh, reps := range s.Shards {
		z := map[string]bool{}
		for _, id := range reps {
			if state[id] != Alive {
				t.Fatalf("shard %d has a replica on %s node %s", sh, state[id], id)
			}
			load[id]++
			z[zone[id]] = true
		}
		if len(reps) != min(s.Replicas, len(load)) || len(z) != min(len(zones), len(reps)) {
			t.Fatalf("shard %d: replicas %v in zones %v", sh, reps, z)
		}
		leads[s.Leaders[sh]]++
	}
	return Spread(load), Spread(leads)
}

// lowerBound is the fewest replica moves that can reach balance: every replica on a node that may not keep it
// (draining, gone) must move, and so must every replica above the ceiling of the mean on an eligible node.
func (s *sim) lowerBound() int {
	load := map[string]int{}
	for _, n := range s.Nodes {
		if n.State == Alive {
			load[n.ID] = 0
		}
	}
	displaced, total := 0, 0
	for _, reps := range s.Shards {
		for _, id := range reps {
			total++
			if _, ok := load[id]; ok {
				load[id]++
			} else {
				displaced++
			}
		}
	}
	hi := (total + len(load) - 1) / len(load)
	over := 0
	for _, v := range load {
		over += max(0, v-hi)
	}
	return displaced + over
}

// TestPlanAtScale drives the planner through 100 nodes in 5 zones and 4,096 shards × 3: formation on 50 nodes,
// 50 joins, 10 drains and the loss of a whole zone. After each, replicas and leaders per node are within ±1,
// every shard has 3 replicas in 3 zones, and the replica moves stay within 1.2× the lower bound.
func TestPlanAtScale(t *testing.T) {
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("4,096 shards (-short); never skipped in CI")
	}
	s := newSim(50, 5, 4096, 3)
	s.converge(t, Limits{})
	rs, ls := s.check(t)
	t.Logf("formed on 50 nodes: replica spread %d, leader spread %d", rs, ls)
	step := func(name string, change func()) {
		change()
		lb := s.lowerBound()
		s.moves, s.transfers = 0, 0
		rounds := s.converge(t, Limits{})
		rs, ls := s.check(t)
		t.Logf("%s: %d replica moves (lower bound %d, ratio %.3f), %d leader transfers, %d plans; replica spread %d, leader spread %d",
			name, s.moves, lb, float64(s.moves)/float64(max(lb, 1)), s.transfers, rounds, rs, ls)
		if rs > 1 || ls > 1 {
			t.Errorf("%s: spreads %d/%d, want ≤1", name, rs, ls)
		}
		if lb > 0 && float64(s.moves) > 1.2*float64(lb) {
			t.Errorf("%s: %d moves, more than 1.2 × the lower bound %d", name, s.moves, lb)
		}
	}
	step("50 nodes join", func() {
		for i := 50; i < 100; i++ {
			s.join(i, 5)
		}
	})
	step("10 nodes drain", func() {
		s.set(Draining, func(n Node) bool { return n.ID >= "n090" })
	})
	step("zone z4 lost", func() {
		s.set(Gone, func(n Node) bool { return n.Zone == "z4" })
	})
}

// The lower bound for a drain counts the drained replicas too: they must all move.
func TestDrainMovesEveryReplicaAndLeader(t *testing.T) {
	s := newSim(4, 1, 16, 3)
	s.converge(t, Limits{})
	s.set(Draining, func(n Node) bool { return n.ID == "n000" })
	s.converge(t, Limits{MaxMoves: 2, MaxTransfers: 1})
	for sh, reps := range s.Shards {
		if slices.Contains(reps, "n000") || s.Leaders[sh] == "n000" {
			t.Fatalf("shard %d still on the drained node: %v led by %s", sh, reps, s.Leaders[sh])
		}
	}
	if rs, ls := s.check(t); rs > 1 || ls > 1 {
		t.Fatalf("spreads %d/%d", rs, ls)
	}
}

func TestLimitsBoundEachPlan(t *testing.T) {
	s := newSim(3, 1, 48, 3)
	s.converge(t, Limits{})
	for i := 3; i < 6; i++ {
		s.join(i, 1)
	}
	p := Next(s.Cluster, Limits{MaxMoves: 4, MaxPerNode: 1, MaxTransfers: 2})
	if len(p.Moves) > 4 || len(p.Transfers) > 2 {
		t.Fatalf("%d moves, %d transfers", len(p.Moves), len(p.Transfers))
	}
	per := map[string]int{}
	for _, m := range p.Moves {
		per[m.From]++
		per[m.To]++
	}
	for id, k := range per {
		if k > 1 {
			t.Fatalf("node %s in %d moves of one plan", id, k)
		}
	}
	// Busy nodes take no further move.
	busy := map[string]int{"n003": 1, "n004": 1, "n005": 1}
	c := s.Cluster
	c.Busy = busy
	if p := Next(c, Limits{MaxPerNode: 1}); len(p.Moves) != 0 {
		t.Fatalf("moves onto busy nodes: %v", p.Moves)
	}
}

func TestZonesSpreadWhenEnough(t *testing.T) {
	// Three zones, replicas all in one zone at first: the plan spreads them.
	s := newSim(6, 3, 8, 3)
	for sh := range s.Shards {
		s.Shards[sh] = []string{"n000", "n003"} // both in z0
		s.Leaders[sh] = "n000"
	}
	s.converge(t, Limits{})
	s.check(t)
	// Two zones for three replicas: two distinct zones, never fewer.
	s2 := newSim(4, 2, 8, 3)
	s2.converge(t, Limits{})
	s2.check(t)
}

func TestNextIsDeterministic(t *testing.T) {
	s := newSim(7, 3, 64, 3)
	s.converge(t, Limits{})
	s.join(7, 3)
	a, b := Next(s.Cluster, Limits{MaxMoves: 5}), Next(s.Cluster, Limits{MaxMoves: 5})
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatal("two plans of one input differ")
	}
}
