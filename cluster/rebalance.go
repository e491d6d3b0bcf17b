package cluster

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/placement"
)

// shardView is what the meta leader knows of one shard's raft group from its leader's report.
type shardView struct {
	leader     string
	voters     []string
	nonvoters  []string
	applied    uint64
	bytes      uint64
	memories   int64             // the leader's count (-1: no leader reported)
	replicaApp map[string]uint64 // node → applied index, for every replica that reported
	loading    map[string]bool   // nodes whose replica's indexes are still loading (loading.go)
}

// converged reports whether the group's membership is the placement: every placed node votes, nothing else.
func (v shardView) converged(placed []string) bool {
	return v.leader != "" && len(v.nonvoters) == 0 && slices.Equal(v.voters, sortedCopy(placed))
}

// holders are the nodes that hold the shard or may still: its placement, and the voters and non-voters its
// leader reports (a replica moved off in the placement stays in the group until the leader removes it).
func (v shardView) holders(placed []string) []string {
	return union(v.voting(placed), v.nonvoters)
}

// voting are the nodes whose votes the shard's quorum may count: its placement and the voters its leader reports.
func (v shardView) voting(placed []string) []string {
	return union(placed, v.voters)
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, id := range b {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// shardViews reads every shard's group from the reports of the live nodes.
func (n *Node) shardViews(ctx context.Context, st MetaState) []shardView {
	return viewsFrom(st, n.gatherReports(ctx, sortedKeys(st.Nodes), n.memberStates()))
}

func viewsFrom(st MetaState, reports map[string][]ReplicaReport) []shardView {
	views := make([]shardView, len(st.Placement))
	for i := range views {
		views[i].memories = -1
	}
	for node, reps := range reports {
		for _, rr := range reps {
			s := int(rr.Shard)
			if s >= len(views) {
				continue
			}
			v := &views[s]
			if v.replicaApp == nil {
				v.replicaApp = map[string]uint64{}
			}
			v.replicaApp[node] = rr.Applied
			if rr.IndexesLoading {
				if v.loading == nil {
					v.loading = map[string]bool{}
				}
				v.loading[node] = true
			}
			if rr.State == "Leader" {
				v.leader, v.voters, v.nonvoters, v.applied, v.bytes = node, rr.Voters, rr.Nonvoters, rr.Applied, rr.Bytes
				v.memories = rr.Memories
			}
		}
	}
	return views
}

// planInput turns the meta state, gossip and the shard views into the planner's input.
func (n *Node) planInput(st MetaState, gone map[string]bool, views []shardView) placement.Cluster {
	states := n.memberStates()
	c := placement.Cluster{Replicas: st.Replicas, Shards: st.Placement, Leaders: make([]string, len(st.Placement)),
		Busy: map[string]int{}, Moving: map[int]bool{}}
	for _, id := range sortedKeys(st.Nodes) {
		c.Nodes = append(c.Nodes, placement.Node{ID: id, Zone: st.Nodes[id].Zone, State: planState(st, id, states[id], gone[id])})
	}
	for s, v := range views {
		c.Leaders[s] = v.leader
		if v.converged(st.Placement[s]) {
			continue
		}
		c.Moving[s] = true
		in := append(slices.Clone(v.voters), v.nonvoters...)
		for _, id := range symmetricDiff(st.Placement[s], in) {
			c.Busy[id]++
		}
	}
	return c
}

func planState(st MetaState, id, gossip string, gone bool) placement.State {
	switch {
	case st.StateOf(id) == NodeRemoved:
		return placement.Removed
	case gone:
		return placement.Gone
	case gossip == "suspect":
		return placement.Suspect
	case gossip != "alive":
		return placement.Dead
	case st.StateOf(id) == NodeDraining:
		return placement.Draining
	}
	return placement.Alive
}

// rebalance, run by the meta leader each reconcile, plans the next step and starts it: a new placement through
// the meta group (each shard's leader then converges its membership: reconcileShard) and leadership transfers.
// While paused, or with MaxMoves moves already under way, only lost replicas are repaired.
func (n *Node) rebalance(st MetaState, gone map[string]bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	views := n.shardViews(ctx, st)
	n.autoSplit(st, views)
	in := n.planInput(st, gone, views)
	n.observeMoves(st, views, in)
	budget := n.cfg.MaxMoves - len(in.Moving)
	lim := placement.Limits{MaxMoves: budget, MaxPerNode: n.cfg.MovesPerNode, MaxTransfers: n.cfg.MaxTransfers,
		RepairOnly: st.Paused || budget <= 0 || st.Split != nil}
	plan := placement.Next(in, lim)
	if sp := st.Split; sp != nil {
		// A split's parent and child keep their replicas until it is done: the child's first voters are the
		// parent's. Other shards are only repaired meanwhile, with no leadership transfers.
		plan.Placement[sp.Parent], plan.Placement[sp.Child] = st.Placement[sp.Parent], st.Placement[sp.Child]
		plan.Moves = slices.DeleteFunc(plan.Moves, func(m placement.Move) bool {
			return m.Shard == int(sp.Parent) || m.Shard == int(sp.Child)
		})
		plan.Transfers = nil
	}
	if !placementEqual(plan.Placement, st.Placement) {
		for _, m := range plan.Moves {
			n.metrics.movesStarted.WithLabelValues(m.Reason).Inc()
			n.log.Info("moving replica", "shard", m.Shard, "from", m.From, "to", m.To, "reason", m.Reason)
		}
		n.proposeMeta(metaCommand{V: metaCommandVersion, Op: "set_placement", Placement: plan.Placement})
	}
	if st.Paused {
		return
	}
	for _, t := range plan.Transfers {
		if !n.transferAllowed(t, views) {
			continue
		}
		n.metrics.transfers.WithLabelValues(t.Reason).Inc()
		go func(t placement.Transfer) {
			tctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := n.TransferLeader(tctx, uint32(t.Shard), t.To); err != nil {
				n.log.Debug("leader transfer", "shard", t.Shard, "to", t.To, "err", err)
			}
		}(t)
	}
}

// rebalanceEvery bounds how often the meta leader plans (each plan gathers every node's report).
const rebalanceEvery = 500 * time.Millisecond

// transferSlack is how far (raft entries) an automatic transfer's target may trail the leader.
const transferSlack = 64

// transferCooldown is how long a shard gets no new automatic leadership transfer after one was started.
const transferCooldown = 15 * time.Second

// transferAllowed guards automatic leadership transfers against a hashicorp/raft v1.8.0 hang: a transfer
// whose catch-up request to the target's replication goroutine is never read blocks forever (raft.go:1003,
// seen in a rebalance benchmark: 12 minutes in a chan send), and the leader then refuses every write and
// membership change with "leadership transfer in progress". Transfers go only to a target within
// transferSlack entries of the leader (little catch-up), and at most once per transferCooldown per shard (a
// retry soon after a failed attempt is what meets the stale request). Nor to a replica whose indexes still load.
// Operator transfers are not limited.
func (n *Node) transferAllowed(t placement.Transfer, views []shardView) bool {
	if t.Shard >= len(views) {
		return false
	}
	v := views[t.Shard]
	if app, ok := v.replicaApp[t.To]; !ok || app+transferSlack < v.applied {
		return false
	}
	if v.loading[t.To] {
		return false // it would serve no read, and hand the leadership on, until its indexes have loaded
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if time.Since(n.transferred[t.Shard]) < transferCooldown {
		return false
	}
	n.transferred[t.Shard] = time.Now()
	return true
}

// observeMoves keeps the move metrics: moves under way, finished ones (with the shard's bytes), and the
// replica and leader imbalance over eligible nodes.
func (n *Node) observeMoves(st MetaState, views []shardView, in placement.Cluster) {
	n.mu.Lock()
	prev := n.moving
	n.moving = in.Moving
	n.mu.Unlock()
	for s := range prev {
		if !in.Moving[s] && s < len(views) {
			n.metrics.movesFinished.Inc()
			n.metrics.movedBytes.Add(float64(views[s].bytes))
		}
	}
	n.metrics.movesInFlight.Set(float64(len(in.Moving)))
	load, leads := map[string]int{}, map[string]int{}
	for _, nd := range in.Nodes {
		if nd.State == placement.Alive {
			load[nd.ID], leads[nd.ID] = 0, 0
		}
	}
	for s, reps := range st.Placement {
		for _, id := range reps {
			if _, ok := load[id]; ok {
				load[id]++
			}
		}
		if _, ok := leads[in.Leaders[s]]; ok {
			leads[in.Leaders[s]]++
		}
	}
	n.metrics.replicaImbalance.Set(float64(placement.Spread(load)))
	n.metrics.leaderImbalance.Set(float64(placement.Spread(leads)))
}

func symmetricDiff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			out = append(out, x)
		}
	}
	return out
}

func sortedCopy(a []string) []string {
	out := slices.Clone(a)
	slices.Sort(out)
	return out
}

// moveStatus lists the moves under way as the shard views show them.
func moveStatus(st MetaState, views []shardView) []apiMove {
	var out []apiMove
	for s, v := range views {
		if s >= len(st.Placement) || v.leader == "" || v.converged(st.Placement[s]) {
			continue
		}
		for _, id := range st.Placement[s] {
			switch {
			case slices.Contains(v.nonvoters, id):
				out = append(out, apiMove{Shard: s, To: id, Stage: "catching_up"})
			case !slices.Contains(v.voters, id):
				out = append(out, apiMove{Shard: s, To: id, Stage: "adding"})
			}
		}
		for _, id := range append(slices.Clone(v.voters), v.nonvoters...) {
			if !slices.Contains(st.Placement[s], id) {
				out = append(out, apiMove{Shard: s, From: id, Stage: "removing"})
			}
		}
	}
	return out
}

type apiMove = apiv1.MoveStatus

// errorf wraps a sentinel with a formatted message.
func errorf(sentinel error, format string, a ...any) error {
	return fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, a...))
}
