package cluster

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/memcluster/memcluster/apiv1"
)

// Status assembles the cluster's state from the meta group, gossip, and every live node's report of its own
// replicas (asked in parallel, each within a short deadline).
func (n *Node) Status(ctx context.Context) apiv1.ClusterStatus {
	st := n.meta.State()
	states := n.memberStates()
	out := apiv1.ClusterStatus{NodeID: n.cfg.NodeID, RebalancePaused: st.Paused, Moves: []apiv1.MoveStatus{},
		Buckets: st.Buckets, MapVersion: st.MapVersion}
	if sp := st.Split; sp != nil {
		out.Split = &apiv1.SplitUnderWay{Shard: int(sp.Parent), Child: int(sp.Child)}
	}
	ids := sortedKeys(st.Nodes)
	for id := range n.liveMembers() {
		if _, ok := st.Nodes[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	reports := n.gatherReports(ctx, ids, states)
	views := viewsFrom(st, reports)
	load, leads, bytes := map[string]int{}, map[string]int{}, map[string]uint64{}
	for s, reps := range st.Placement {
		// A node counts a replica until its shard's group no longer has it, not only until the placement
		// moves it: a drain is done when the node is out of every group.
		for _, id := range views[s].holders(reps) {
			load[id]++
		}
		leads[views[s].leader]++
	}
	for id, reps := range reports {
		for _, rr := range reps {
			bytes[id] += rr.Bytes
		}
	}
	for _, id := range ids {
		info := st.Nodes[id]
		if info.ID == "" {
			info = n.liveMembers()[id]
		}
		out.Nodes = append(out.Nodes, apiv1.NodeStatus{ID: id, State: nodeState(st, id, states[id]), HTTPAddr: info.HTTPAddr,
			RaftAddr: info.RaftAddr, GossipAddr: info.GossipAddr, Zone: info.Zone, Replicas: load[id], Leaders: leads[id],
			Bytes: bytes[id]})
	}
	out.Healthy = st.Initialized()
	for s, reps := range st.Placement {
		v := views[s]
		ss := apiv1.ShardStatus{ID: s, Replicas: reps, Want: min(st.Replicas, len(ids)), Leader: v.leader,
			AppliedIndex: v.applied, Bytes: v.bytes, Moving: v.leader != "" && !v.converged(reps), Memories: v.memories,
			Splitting: st.Split != nil && (s == int(st.Split.Parent) || s == int(st.Split.Child))}
		if s < len(st.Ranges) {
			ss.Range = apiRange(st.Ranges[s])
		}
		for _, id := range reps {
			if states[id] == "alive" {
				ss.LiveReplicas++
			}
		}
		for _, id := range sortedKeys(v.replicaApp) {
			app := v.replicaApp[id]
			ss.Progress = append(ss.Progress, apiv1.ReplicaProgress{Node: id, Applied: app, Lag: v.applied - min(app, v.applied),
				IndexesLoading: v.loading[id]})
		}
		if ss.Leader == "" || ss.LiveReplicas < min(st.Replicas, len(reps)) || len(reps) < st.Replicas || ss.Splitting {
			out.Healthy = false
		}
		out.Shards = append(out.Shards, ss)
	}
	out.Moves = append(out.Moves, moveStatus(st, views)...)
	return out
}

// nodeState is a member's state for operators: removed, else gossip's when not alive, else draining or alive.
func nodeState(st MetaState, id, gossip string) string {
	switch {
	case st.StateOf(id) == NodeRemoved:
		return NodeRemoved
	case gossip == "":
		return "dead"
	case gossip != "alive":
		return gossip
	case st.StateOf(id) == NodeDraining:
		return NodeDraining
	}
	return "alive"
}

func (n *Node) gatherReports(ctx context.Context, ids []string, states map[string]string) map[string][]ReplicaReport {
	out := map[string][]ReplicaReport{n.cfg.NodeID: n.Report().Replicas}
	var mu sync.Mutex
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for _, id := range ids {
		if id == n.cfg.NodeID || states[id] != "alive" {
			continue
		}
		addr := n.httpAddrOf(id)
		wg.Add(1)
		go func(id, addr string) {
			defer wg.Done()
			var rep NodeReport
			if err := n.call(ctx, http.MethodGet, addr, internalPrefix+"node", nil, "", nil, &rep); err == nil {
				mu.Lock()
				out[id] = rep.Replicas
				mu.Unlock()
			}
		}(id, addr)
	}
	wg.Wait()
	return out
}

// Ready reports whether every replica held before a restart is open and every local replica knows a leader (the
// /readyz condition).
func (n *Node) Ready() (bool, string) {
	if n.removed.Load() {
		return false, ErrRemoved.Error()
	}
	if !n.meta.State().Initialized() {
		return false, "cluster not formed yet"
	}
	n.mu.RLock()
	held := len(n.held)
	n.mu.RUnlock()
	if held > 0 {
		// Until then a request for one of these shards finds no local replica (restart.go).
		return false, "replicas held before the restart are not open yet"
	}
	for _, s := range n.LocalShards() {
		r, ok := n.Replica(s)
		if !ok {
			continue
		}
		if r.FSM.Halted() {
			return false, "a replica halted"
		}
		if r.indexesFailed() != nil {
			return false, fmt.Sprintf("shard %d: indexes failed to load (see the log)", s)
		}
		if r.Leader() == "" {
			return false, "a local shard has no leader"
		}
	}
	return true, ""
}
