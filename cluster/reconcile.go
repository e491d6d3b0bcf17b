package cluster

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/hashicorp/raft"
)

// reconcile converges this node toward the meta state: it forms the cluster when it should, starts and drops
// local replicas, and, where this node leads, fixes raft memberships and the placement.
func (n *Node) reconcile() {
	if n.removed.Load() {
		return
	}
	if !n.mraft.hasState && n.cfg.BootstrapExpect > 0 && n.bootInit == nil && !n.meta.State().Initialized() {
		n.tryBootstrap()
	}
	n.updateFormats()
	n.reconcileLocal()
	n.shedLeadership()
	if n.IsMetaLeader() {
		n.reconcileMeta()
	}
	applies := map[string]bool{} // members asked whether they apply prunes, this round (prune.go)
	for _, s := range n.LocalShards() {
		if r, ok := n.Replica(s); ok && r.IsLeader() {
			n.reconcileShard(r)
			n.maybePrune(r, applies)
		}
	}
	n.rememberPeers()
}

// tryBootstrap forms the cluster once BootstrapExpect nodes see each other. Every one of them computes the same
// voters and placement from the same member list and bootstraps its groups with them.
func (n *Node) tryBootstrap() {
	live := n.liveMembers()
	if len(live) < n.cfg.BootstrapExpect {
		return
	}
	ids := sortedKeys(live)[:n.cfg.BootstrapExpect]
	if !slices.Contains(ids, n.cfg.NodeID) {
		return // a later arrival: it joins like any other node
	}
	addrs := map[string]string{}
	var nodes []NodeInfo
	for _, id := range ids {
		addrs[id] = live[id].RaftAddr
		nodes = append(nodes, live[id])
	}
	metaVoters := ids[:min(len(ids), 5)]
	if slices.Contains(metaVoters, n.cfg.NodeID) {
		if err := n.bootstrap(n.mraft, metaVoters, addrs); err != nil {
			n.log.Error("bootstrap meta group", "err", err)
			return
		}
	}
	placement := InitialPlacement(ids, n.cfg.Shards, n.cfg.Replicas)
	for s, reps := range placement {
		if slices.Contains(reps, n.cfg.NodeID) {
			if err := n.bootstrapShard(uint32(s), reps, addrs); err != nil {
				n.log.Error("bootstrap shard", "shard", s, "err", err)
				return
			}
		}
	}
	n.bootInit = &metaCommand{V: metaCommandVersion, Op: "init", Nodes: nodes,
		Shards: n.cfg.Shards, Replicas: n.cfg.Replicas, Placement: placement}
	n.log.Info("cluster formed", "nodes", ids, "shards", n.cfg.Shards, "replicas", n.cfg.Replicas)
}

// bootstrapShard starts a replica of a forming cluster with its first voters, retrying a transient failure at
// once: if the meta group forms meanwhile, this node stops bootstrapping, and a replica started later without
// its voters waits for a leader to add it — which never comes when every voter of the group missed its
// bootstrap (a shard with one replica).
func (n *Node) bootstrapShard(shard uint32, voters []string, addrs map[string]string) error {
	var err error
	for attempt := range 5 {
		if _, err = n.startReplica(shard, voters, addrs); err == nil {
			return nil
		}
		n.log.Warn("bootstrap shard: retrying", "shard", shard, "attempt", attempt+1, "err", err)
		time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
	}
	return err
}

// reconcileLocal starts replicas placed here and drops those placed elsewhere once they are out of the group.
func (n *Node) reconcileLocal() {
	st := n.meta.State()
	if !st.Initialized() || !n.restartHeld(st) {
		return
	}
	for s, reps := range st.Placement {
		if slices.Contains(reps, n.cfg.NodeID) {
			if _, ok := n.Replica(uint32(s)); !ok && !n.awaitsSplit(st, uint32(s)) {
				if _, err := n.startReplica(uint32(s), nil, nil); err != nil {
					n.log.Error("start placed replica", "shard", s, "err", err)
				}
			}
		}
	}
	for _, s := range n.LocalShards() {
		placed := int(s) < len(st.Placement) && slices.Contains(st.Placement[s], n.cfg.NodeID)
		n.mu.Lock()
		if placed {
			delete(n.outSince, s)
			n.mu.Unlock()
			continue
		}
		since, ok := n.outSince[s]
		if !ok {
			n.outSince[s] = time.Now()
		}
		n.mu.Unlock()
		r, _ := n.Replica(s)
		// A removed follower may never hear of its removal: it is dropped once the shard's leader no longer
		// counts it (so a replica being moved off keeps voting until its replacement votes), or after a long
		// wait when no leader says so.
		if ok && r != nil && !r.IsLeader() && time.Since(since) > 2*time.Second &&
			(!n.stillMember(r, placedOn(st, s)) || time.Since(since) > 10*time.Minute) {
			n.dropReplica(s)
		}
	}
}

// catchUpSlack is how far (in raft entries) a non-voter may trail the leader and still be promoted.
const catchUpSlack = 256

// reconcileShard, run by a shard's leader, makes the raft membership match the placement one change at a time
// without ever holding fewer voting copies than the placement wants while a replica moves:
//  1. a voter placed nowhere and not alive goes first (it counts toward quorum and never answers);
//  2. a placed node missing from the group joins as a non-voter, which catches up (snapshot and log) without
//     counting toward quorum;
//  3. a placed non-voter that has caught up is promoted to voter;
//  4. only then is a live replica that is no longer placed removed;
//  5. a leader that is itself no longer placed hands leadership to a placed voter.
func (n *Node) reconcileShard(r *Replica) {
	st := n.meta.State()
	if !st.Initialized() || int(r.Shard) >= len(st.Placement) {
		return
	}
	want := st.Placement[r.Shard]
	servers, err := r.Configuration()
	if err != nil {
		return
	}
	states := n.memberStates()
	in := map[string]raft.ServerSuffrage{}
	for _, s := range servers {
		in[string(s.ID)] = s.Suffrage
	}
	for _, s := range servers {
		id := string(s.ID)
		if !slices.Contains(want, id) && id != n.cfg.NodeID && states[id] != "alive" {
			n.membershipStep(r, "remove_dead", id, r.raft.RemoveServer(s.ID, 0, 5*time.Second))
			return
		}
	}
	for _, id := range want {
		info, known := st.Nodes[id]
		if _, ok := in[id]; !ok && known {
			n.membershipStep(r, "add_nonvoter", id, r.raft.AddNonvoter(raft.ServerID(id), raft.ServerAddress(info.RaftAddr), 0, 5*time.Second))
			return
		}
	}
	for _, id := range want {
		if in[id] == raft.Nonvoter && states[id] == "alive" {
			if n.caughtUp(r, id) {
				n.membershipStep(r, "promote", id, r.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(st.Nodes[id].RaftAddr), 0, 5*time.Second))
			}
			return
		}
	}
	for _, s := range servers {
		if id := string(s.ID); !slices.Contains(want, id) && id != n.cfg.NodeID {
			n.membershipStep(r, "remove", id, r.raft.RemoveServer(s.ID, 0, 5*time.Second))
			return
		}
	}
	if !slices.Contains(want, n.cfg.NodeID) && len(want) > 0 {
		_ = n.waitRaft(r.raft.LeadershipTransfer())
	}
}

// membershipStep logs one membership change and counts its failure.
func (n *Node) membershipStep(r *Replica, step, node string, f raft.IndexFuture) {
	if err := n.waitRaft(f); err != nil {
		n.metrics.moveStepsFailed.WithLabelValues(step).Inc()
		n.log.Warn("shard membership change failed", "shard", r.Shard, "step", step, "node", node, "err", err)
		return
	}
	n.log.Info("shard membership changed", "shard", r.Shard, "step", step, "node", node)
}

// caughtUp reports whether node's replica of r's shard knows the group's configuration and has applied within
// catchUpSlack entries of r. A replica that has not heard from the leader yet is never promoted, however short
// the log: as a voter it could refuse every vote (voteGuard, where the node dropped the group before) and leave
// the group without a quorum of voters able to elect.
func (n *Node) caughtUp(r *Replica, node string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var rep NodeReport
	if err := n.call(ctx, http.MethodGet, n.httpAddrOf(node), internalPrefix+"node", nil, "", nil, &rep); err != nil {
		return false
	}
	for _, rr := range rep.Replicas {
		if rr.Shard == r.Shard {
			return rr.Configured && rr.Applied+catchUpSlack >= r.FSM.AppliedIndex()
		}
	}
	return false
}

// placedOn is the nodes placed to hold shard s (none for a shard the map does not have).
func placedOn(st MetaState, s uint32) []string {
	if int(s) < len(st.Placement) {
		return st.Placement[s]
	}
	return nil
}

// stillMember asks the shard's leader whether this node is still in its group (true when no leader can tell).
// The leader is the local replica's view, or, when it knows none (a removed replica campaigns alone and never
// hears from the group again), whichever placed replica reports leading.
func (n *Node) stillMember(r *Replica, placed []string) bool {
	ask := placed
	if l := r.Leader(); l != "" {
		ask = []string{l}
	}
	member, known := n.groupCounts(r.Shard, ask)
	return member || !known
}

// reconcileMeta, run by the meta leader, records members, keeps the meta group's membership and re-places the
// replicas of nodes dead past DeadNodeTimeout.
func (n *Node) reconcileMeta() {
	st := n.meta.State()
	if !st.Initialized() {
		if n.bootInit != nil {
			n.proposeMeta(*n.bootInit)
		}
		return
	}
	n.bootInit = nil
	live := n.liveMembers()
	n.tellRemoved(st, live)
	for id, info := range live {
		if st.StateOf(id) == NodeRemoved {
			continue
		}
		if old, ok := st.Nodes[id]; !ok || old != info {
			info := info
			n.proposeMeta(metaCommand{V: metaCommandVersion, Op: "upsert_node", Node: &info})
		}
	}
	now := time.Now()
	gone := map[string]bool{}
	for id := range st.Nodes {
		if _, ok := live[id]; ok {
			delete(n.deadSince, id)
			continue
		}
		if _, ok := n.deadSince[id]; !ok {
			n.deadSince[id] = now
		}
		if now.Sub(n.deadSince[id]) > n.cfg.DeadNodeTimeout {
			gone[id] = true
		}
	}
	n.syncMetaMembership(st, live, gone)
	if st.Split != nil {
		n.driveSplit(st)
	}
	// Planning asks every node for its replica report: at most twice a second, however fast reconciles run.
	if time.Since(n.planned) >= rebalanceEvery {
		n.planned = time.Now()
		n.rebalance(st, gone)
	}
}

// syncMetaMembership keeps the meta group at 3 or 5 voters as membership allows, one change per reconcile:
// a live member is made a voter (a non-voter promoted, or a new member added) while fewer live voters than
// wanted vote; then voters dead past the timeout or removed are taken out (after their replacement, so the
// group never shrinks below what it had); other live members follow as non-voters.
func (n *Node) syncMetaMembership(st MetaState, live map[string]NodeInfo, gone map[string]bool) {
	f := n.mraft.raft.GetConfiguration()
	if f.Error() != nil {
		return
	}
	eligible := 0
	for id := range live {
		if st.StateOf(id) != NodeRemoved {
			eligible++
		}
	}
	want := min(5, eligible)
	if want%2 == 0 {
		want--
	}
	servers := f.Configuration().Servers
	liveVoters, in := 0, map[string]raft.ServerSuffrage{}
	for _, s := range servers {
		in[string(s.ID)] = s.Suffrage
		if _, ok := live[string(s.ID)]; ok && s.Suffrage == raft.Voter && st.StateOf(string(s.ID)) != NodeRemoved {
			liveVoters++
		}
	}
	if liveVoters < want {
		for _, id := range sortedKeys(live) {
			if sf, ok := in[id]; st.StateOf(id) != NodeRemoved && (!ok || sf != raft.Voter) {
				n.log.Info("meta group: adding voter", "node", id, "live_voters", liveVoters, "want", want)
				n.logMetaChange("add voter", id, n.waitRaft(n.mraft.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(live[id].RaftAddr), 0, 5*time.Second)))
				return
			}
		}
	}
	for _, s := range servers {
		id := string(s.ID)
		if id != n.cfg.NodeID && (gone[id] || st.StateOf(id) == NodeRemoved) {
			n.log.Info("meta group: removing member", "node", id, "gone", gone[id])
			n.logMetaChange("remove member", id, n.waitRaft(n.mraft.raft.RemoveServer(s.ID, 0, 5*time.Second)))
			return
		}
	}
	for _, id := range sortedKeys(live) {
		if _, ok := in[id]; !ok && st.StateOf(id) != NodeRemoved {
			n.logMetaChange("add non-voter", id, n.waitRaft(n.mraft.raft.AddNonvoter(raft.ServerID(id), raft.ServerAddress(live[id].RaftAddr), 0, 5*time.Second)))
			return
		}
	}
}

// logMetaChange says when a meta membership change failed: the next reconcile tries again, but an operator (or a
// failing test) needs to see why the group's membership does not move.
func (n *Node) logMetaChange(op, id string, err error) {
	if err != nil {
		n.log.Warn("meta group: membership change failed", "op", op, "node", id, "err", err)
	}
}

func (n *Node) proposeMeta(c metaCommand) {
	b, _ := json.Marshal(c)
	if err := n.waitRaft(n.mraft.raft.Apply(b, 5*time.Second)); err != nil {
		n.log.Warn("meta proposal failed", "op", c.Op, "err", err)
	}
}

// rememberPeers saves the members' gossip addresses so a restart can rejoin without --join.
func (n *Node) rememberPeers() {
	st := n.meta.State()
	var peers []string
	for _, id := range sortedKeys(st.Nodes) {
		if id != n.cfg.NodeID {
			peers = append(peers, st.Nodes[id].GossipAddr)
		}
	}
	if len(peers) == 0 {
		return
	}
	b, _ := json.Marshal(peers)
	if old, _ := n.db.GetNode("peers"); string(old) != string(b) {
		_ = n.db.SetNode("peers", b)
	}
}

func placementEqual(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
