package cluster

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/hashicorp/raft"
)

// reconcile converges this node toward the meta state: it forms the cluster when it should, starts and drops
// local replicas, and, where this node leads, fixes raft memberships and the placement.
func (n *Node) reconcile() {
	if !n.mraft.hasState && n.cfg.BootstrapExpect > 0 && n.bootInit == nil && !n.meta.State().Initialized() {
		n.tryBootstrap()
	}
	n.reconcileLocal()
	n.shedLeadership()
	if n.IsMetaLeader() {
		n.reconcileMeta()
	}
	for _, s := range n.LocalShards() {
		if r, ok := n.Replica(s); ok && r.IsLeader() {
			n.reconcileShard(r)
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
	if !st.Initialized() {
		return
	}
	for s, reps := range st.Placement {
		if slices.Contains(reps, n.cfg.NodeID) {
			if _, ok := n.Replica(uint32(s)); !ok {
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
		// A removed follower may never hear of its removal; give the leader time to move the group first.
		if ok && time.Since(since) > 10*time.Second && r != nil && !r.IsLeader() {
			n.dropReplica(s)
		}
	}
}

// reconcileShard, run by a shard's leader, makes the raft membership match the placement one change at a time:
// removals first (so a dead voter stops counting toward quorum), then additions, then handing leadership away
// if this node itself is no longer placed.
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
	var have []string
	for _, s := range servers {
		have = append(have, string(s.ID))
		if !slices.Contains(want, string(s.ID)) && string(s.ID) != n.cfg.NodeID {
			n.log.Info("removing replica", "shard", r.Shard, "node", s.ID)
			_ = r.raft.RemoveServer(s.ID, 0, 5*time.Second).Error()
			return
		}
	}
	for _, id := range want {
		info, known := st.Nodes[id]
		if !slices.Contains(have, id) && known {
			n.log.Info("adding replica", "shard", r.Shard, "node", id)
			_ = r.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(info.RaftAddr), 0, 5*time.Second).Error()
			return
		}
	}
	if !slices.Contains(want, n.cfg.NodeID) && len(want) > 0 {
		_ = r.raft.LeadershipTransfer().Error()
	}
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
	for id, info := range live {
		if old, ok := st.Nodes[id]; !ok || old != info {
			info := info
			n.proposeMeta(metaCommand{V: metaCommandVersion, Op: "upsert_node", Node: &info})
		}
	}
	n.syncMetaMembership(live)
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
	var liveIDs []string
	for _, id := range sortedKeys(live) {
		if _, ok := st.Nodes[id]; ok {
			liveIDs = append(liveIDs, id)
		}
	}
	next := Repair(st.Placement, liveIDs, gone, st.Replicas)
	if !placementEqual(next, st.Placement) {
		n.log.Info("re-placing replicas", "gone", sortedKeys(gone))
		n.proposeMeta(metaCommand{V: metaCommandVersion, Op: "set_placement", Placement: next})
	}
}

// syncMetaMembership adds live members to the meta group: voters up to five, non-voters beyond.
func (n *Node) syncMetaMembership(live map[string]NodeInfo) {
	f := n.mraft.raft.GetConfiguration()
	if f.Error() != nil {
		return
	}
	voters, in := 0, map[string]bool{}
	for _, s := range f.Configuration().Servers {
		in[string(s.ID)] = true
		if s.Suffrage == raft.Voter {
			voters++
		}
	}
	for _, id := range sortedKeys(live) {
		if in[id] {
			continue
		}
		addr := raft.ServerAddress(live[id].RaftAddr)
		if voters < 5 {
			_ = n.mraft.raft.AddVoter(raft.ServerID(id), addr, 0, 5*time.Second).Error()
			voters++
		} else {
			_ = n.mraft.raft.AddNonvoter(raft.ServerID(id), addr, 0, 5*time.Second).Error()
		}
	}
}

func (n *Node) proposeMeta(c metaCommand) {
	b, _ := json.Marshal(c)
	if err := n.mraft.raft.Apply(b, 5*time.Second).Error(); err != nil {
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
