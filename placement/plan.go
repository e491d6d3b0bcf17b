package placement

import (
	"slices"
	"sort"
)

// State is a node's state as the planner sees it.
type State string

// Node states. Only Alive nodes receive replicas or leadership.
const (
	Alive    State = "alive"
	Suspect  State = "suspect"  // gossip suspects it: it keeps its replicas and gets no new ones
	Dead     State = "dead"     // unreachable, not yet past the dead-node timeout: keeps its replicas (they may come back)
	Gone     State = "gone"     // dead past the timeout: its replicas are replaced
	Draining State = "draining" // alive and serving, but every replica and leadership moves off it
	Removed  State = "removed"  // out of the cluster for good
)

// Node is one member.
type Node struct {
	ID    string
	Zone  string // failure domain ("" is a zone of its own like any other)
	State State
}

// Cluster is the input of a plan: the members, the current placement and who leads each shard.
type Cluster struct {
	Nodes    []Node
	Replicas int        // the replication factor
	Shards   [][]string // shard → the nodes placed to hold it
	Leaders  []string   // shard → its leader ("" unknown); nil: no leadership balancing
	// Busy counts, per node, the replica moves already under way (placed but not yet converged): a node takes
	// part in at most Limits.MaxPerNode moves at once.
	Busy map[string]int
	// Moving marks shards whose last placement change has not converged: they get no new move or transfer.
	Moving map[int]bool
}

// Limits rate-limit a plan so foreground traffic keeps its latency.
type Limits struct {
	MaxMoves     int // replica moves one plan may start (0: no bound); repairs of lost replicas come first
	MaxPerNode   int // moves one node may take part in at once, Busy included (0: no bound)
	MaxTransfers int // leadership transfers one plan may start (0: no bound)
	// RepairOnly starts no move but the repair of lost replicas (rebalancing paused, or enough moves under way);
	// leadership transfers are still planned.
	RepairOnly bool
}

// Move replaces From by To in a shard's placement. From "": a replica added to a shard short of replicas;
// To "": a replica dropped with nowhere to go (fewer eligible nodes than the replication factor).
type Move struct {
	Shard    int
	From, To string
	Reason   string // repair, drain, zone, balance
}

// Transfer moves a shard's leadership.
type Transfer struct {
	Shard    int
	From, To string
	Reason   string // drain, balance
}

// Plan is the next placement and what changes to reach it.
type Plan struct {
	Placement [][]string
	Moves     []Move
	Transfers []Transfer
}

// Next plans one step toward a placement where every shard has its replication factor on eligible nodes,
// replicas of a shard sit in distinct zones whenever there are enough zones, and replicas and leaders per
// eligible node differ by at most one. It is a pure function of its input: the same cluster gives the same plan.
// Priorities: lost replicas, then draining nodes, then zones, then balance, each within the limits.
func Next(c Cluster, lim Limits) Plan {
	p := newPlanner(c, lim)
	p.repair()
	if !lim.RepairOnly {
		p.drain()
		p.spreadZones()
		p.balance()
	}
	p.balanceLeaders()
	return p.out
}

type planner struct {
	c        Cluster
	lim      Limits
	out      Plan
	byID     map[string]Node
	eligible []string // Alive nodes, sorted
	load     map[string]int
	busy     map[string]int
	zones    int // distinct zones among eligible nodes
	leaders  map[string]int
	on       map[string]map[int]bool // node → the shards placed on it
	ledBy    map[string]map[int]bool // node → the shards it leads
}

func newPlanner(c Cluster, lim Limits) *planner {
	p := &planner{c: c, lim: lim, byID: map[string]Node{}, load: map[string]int{}, busy: map[string]int{},
		leaders: map[string]int{}, on: map[string]map[int]bool{}, ledBy: map[string]map[int]bool{}}
	zones := map[string]bool{}
	for _, n := range c.Nodes {
		p.byID[n.ID] = n
		if n.State == Alive {
			p.eligible = append(p.eligible, n.ID)
			p.load[n.ID] = 0
			zones[n.Zone] = true
		}
	}
	sort.Strings(p.eligible)
	p.zones = len(zones)
	for n, b := range c.Busy {
		p.busy[n] = b
	}
	p.out.Placement = make([][]string, len(c.Shards))
	for s, reps := range c.Shards {
		p.out.Placement[s] = slices.Clone(reps)
		for _, id := range reps {
			if _, ok := p.load[id]; ok {
				p.load[id]++
			}
			mark(p.on, id, s, true)
		}
	}
	return p
}

// want is the replicas a shard should have: the replication factor, capped by the eligible nodes.
func (p *planner) want() int { return min(p.c.Replicas, len(p.eligible)) }

func (p *planner) state(id string) State {
	if n, ok := p.byID[id]; ok {
		return n.State
	}
	return Removed // a node the membership no longer knows
}

func (p *planner) movesLeft() bool { return p.lim.MaxMoves <= 0 || len(p.out.Moves) < p.lim.MaxMoves }

func (p *planner) nodeFree(id string) bool {
	return id == "" || p.lim.MaxPerNode <= 0 || p.busy[id] < p.lim.MaxPerNode
}

// replace records a move in shard s from → to.
func (p *planner) replace(s int, from, to, reason string) {
	reps := p.out.Placement[s]
	if from != "" {
		reps = slices.DeleteFunc(reps, func(id string) bool { return id == from })
		if _, ok := p.load[from]; ok {
			p.load[from]--
		}
		mark(p.on, from, s, false)
	}
	if to != "" {
		reps = append(reps, to)
		p.load[to]++
		mark(p.on, to, s, true)
	}
	sort.Strings(reps)
	p.out.Placement[s] = reps
	p.busy[from]++
	p.busy[to]++
	p.out.Moves = append(p.out.Moves, Move{Shard: s, From: from, To: to, Reason: reason})
}

// target picks the eligible node to receive a replica of shard s in place of from: not already holding it,
// free to take part in a move, preferring a zone the shard's other replicas do not use, then the least load.
func (p *planner) target(s int, from string) string {
	used := p.zonesOf(s, from)
	best, bestNew := "", false
	for _, id := range p.eligible {
		if slices.Contains(p.out.Placement[s], id) || !p.nodeFree(id) {
			continue
		}
		isNew := !used[p.byID[id].Zone]
		if best == "" || (isNew && !bestNew) || (isNew == bestNew && p.load[id] < p.load[best]) {
			best, bestNew = id, isNew
		}
	}
	return best
}

// zonesOf lists the zones of shard s's replicas, leaving out the replica on except.
func (p *planner) zonesOf(s int, except string) map[string]bool {
	z := map[string]bool{}
	for _, id := range p.out.Placement[s] {
		if id != except {
			z[p.byID[id].Zone] = true
		}
	}
	return z
}

// repair replaces replicas on gone and removed nodes and fills shards short of replicas. These moves bypass
// MaxMoves' order of priority but still count against it.
func (p *planner) repair() {
	for s := range p.out.Placement {
		for _, id := range slices.Clone(p.out.Placement[s]) {
			st := p.state(id)
			if st != Gone && st != Removed {
				continue
			}
			// A gone node with no live node to take its place stays placed: dropped, its shard would vote with
			// fewer members, and need every one of them, until the node comes back as a member again.
			if to := p.target(s, id); to != "" || st == Removed {
				p.replace(s, id, to, "repair")
			}
		}
		for len(p.out.Placement[s]) < p.want() && p.movesLeft() {
			to := p.target(s, "")
			if to == "" {
				break
			}
			p.replace(s, "", to, "repair")
		}
	}
}

// drain moves replicas off draining nodes.
func (p *planner) drain() {
	for s := range p.out.Placement {
		if p.c.Moving[s] {
			continue
		}
		for _, id := range slices.Clone(p.out.Placement[s]) {
			if p.state(id) != Draining || !p.movesLeft() || !p.nodeFree(id) {
				continue
			}
			if to := p.target(s, id); to != "" {
				p.replace(s, id, to, "drain")
			}
		}
	}
}

// spreadZones moves one replica of a shard whose replicas share a zone while another zone is free.
func (p *planner) spreadZones() {
	for s := range p.out.Placement {
		if p.c.Moving[s] || !p.movesLeft() {
			continue
		}
		reps := p.out.Placement[s]
		if len(p.zonesOf(s, "")) >= min(p.zones, len(reps)) {
			continue
		}
		// Move the most loaded replica among those sharing a zone.
		seen, from := map[string]bool{}, ""
		for _, id := range reps {
			z := p.byID[id].Zone
			if seen[z] && p.nodeFree(id) && (from == "" || p.load[id] > p.load[from]) {
				from = id
			}
			seen[z] = true
		}
		if from == "" {
			continue
		}
		if to := p.target(s, from); to != "" && !p.zonesOf(s, from)[p.byID[to].Zone] {
			p.replace(s, from, to, "zone")
		}
	}
}

// balance moves replicas from the most to the least loaded eligible nodes until they differ by at most one,
// never breaking the zone spread.
func (p *planner) balance() {
	for p.movesLeft() {
		if !p.balanceOnce() {
			return
		}
	}
}

func (p *planner) balanceOnce() bool {
	nodes := slices.Clone(p.eligible)
	sort.SliceStable(nodes, func(i, j int) bool { return p.load[nodes[i]] > p.load[nodes[j]] })
	if len(nodes) < 2 || p.load[nodes[0]]-p.load[nodes[len(nodes)-1]] <= 1 {
		return false
	}
	for _, from := range nodes {
		if !p.nodeFree(from) {
			continue
		}
		for i := len(nodes) - 1; i >= 0; i-- {
			to := nodes[i]
			if p.load[from]-p.load[to] <= 1 {
				break
			}
			if !p.nodeFree(to) {
				continue
			}
			if s := p.movable(from, to); s >= 0 {
				p.replace(s, from, to, "balance")
				return true
			}
		}
	}
	return false
}

// movable finds a shard on from that to can take without lowering the shard's zone spread; -1 if none.
func (p *planner) movable(from, to string) int {
	for _, s := range sortedShards(p.on[from]) {
		if p.c.Moving[s] || p.on[to][s] {
			continue
		}
		before := len(p.zonesOf(s, ""))
		after := p.zonesOf(s, from)
		after[p.byID[to].Zone] = true
		if len(after) >= before {
			return s
		}
	}
	return -1
}

// balanceLeaders moves leadership off nodes that may not lead (draining, suspect, not placed) and then from
// the nodes leading the most shards to replicas leading the fewest, until they differ by at most one. Shards
// whose placement changes in this plan are left alone: their leader hands over as part of the move.
func (p *planner) balanceLeaders() {
	if p.c.Leaders == nil {
		return
	}
	for s, l := range p.c.Leaders {
		if p.stable(s) && p.state(l) == Alive {
			p.leaders[l]++
			mark(p.ledBy, l, s, true)
		}
	}
	for s, l := range p.c.Leaders {
		if !p.stable(s) || l == "" || p.state(l) == Alive || !p.transfersLeft() {
			continue
		}
		if to := p.leaderTarget(s, l, -1); to != "" {
			p.transfer(s, l, to, "drain")
		}
	}
	for p.transfersLeft() && p.balanceLeadersOnce() {
	}
}

func (p *planner) stable(s int) bool {
	if p.c.Moving[s] || s >= len(p.out.Placement) {
		return false
	}
	return slices.Equal(p.out.Placement[s], p.c.Shards[s])
}

func (p *planner) transfersLeft() bool {
	return p.lim.MaxTransfers <= 0 || len(p.out.Transfers) < p.lim.MaxTransfers
}

func (p *planner) transfer(s int, from, to, reason string) {
	p.leaders[from]--
	p.leaders[to]++
	mark(p.ledBy, from, s, false)
	mark(p.ledBy, to, s, true)
	p.out.Transfers = append(p.out.Transfers, Transfer{Shard: s, From: from, To: to, Reason: reason})
}

// leaderTarget is the eligible replica of s, other than from, leading the fewest shards (and fewer than
// below, when below ≥ 0).
func (p *planner) leaderTarget(s int, from string, below int) string {
	best := ""
	for _, id := range p.out.Placement[s] {
		if id == from || p.state(id) != Alive || (below >= 0 && p.leaders[id] >= below) {
			continue
		}
		if best == "" || p.leaders[id] < p.leaders[best] {
			best = id
		}
	}
	return best
}

// balanceLeadersOnce moves one leadership's worth of imbalance: it finds the shortest chain of transfers from
// a node leading the most shards to one leading at least two fewer (each step a stable shard led by one node and
// held by the next), and applies it. A direct transfer is the chain of one step; longer chains reach balance
// where no replica of the busiest node's shards is itself under-loaded.
func (p *planner) balanceLeadersOnce() bool {
	hi, lo := -1, -1
	for _, id := range p.eligible {
		hi = max(hi, p.leaders[id])
		if lo < 0 || p.leaders[id] < lo {
			lo = p.leaders[id]
		}
	}
	if len(p.eligible) < 2 || hi-lo <= 1 {
		return false
	}
	type step struct {
		prev  string
		shard int
	}
	via := map[string]step{}
	var queue []string
	for _, id := range p.eligible {
		if p.leaders[id] == hi {
			via[id] = step{shard: -1}
			queue = append(queue, id)
		}
	}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for _, s := range sortedShards(p.ledBy[x]) {
			if !p.stable(s) {
				continue
			}
			for _, y := range p.out.Placement[s] {
				if _, seen := via[y]; seen || p.state(y) != Alive {
					continue
				}
				via[y] = step{prev: x, shard: s}
				if p.leaders[y] <= hi-2 {
					p.applyChain(y, func(id string) (string, int) { st := via[id]; return st.prev, st.shard })
					return true
				}
				queue = append(queue, y)
			}
		}
	}
	return false
}

// applyChain applies the transfers of a chain ending at sink, walking back through prev.
func (p *planner) applyChain(sink string, prev func(string) (string, int)) {
	for id := sink; ; {
		from, s := prev(id)
		if s < 0 || !p.transfersLeft() {
			return
		}
		p.transfer(s, from, id, "balance")
		id = from
	}
}

// Spread is max minus min of the counts (0 for none): the imbalance the planner keeps within 1.
func Spread(counts map[string]int) int {
	lo, hi, first := 0, 0, true
	for _, v := range counts {
		if first || v < lo {
			lo = v
		}
		if first || v > hi {
			hi = v
		}
		first = false
	}
	return hi - lo
}

func mark(m map[string]map[int]bool, id string, s int, on bool) {
	if m[id] == nil {
		m[id] = map[int]bool{}
	}
	if on {
		m[id][s] = true
	} else {
		delete(m[id], s)
	}
}

func sortedShards(set map[int]bool) []int {
	out := make([]int, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Ints(out)
	return out
}
