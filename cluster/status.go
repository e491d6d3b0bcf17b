package cluster

import (
	"context"
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
	out := apiv1.ClusterStatus{NodeID: n.cfg.NodeID}
	ids := sortedKeys(st.Nodes)
	for id := range n.liveMembers() {
		if _, ok := st.Nodes[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		info := st.Nodes[id]
		if info.ID == "" {
			info = n.liveMembers()[id]
		}
		state := states[id]
		if state == "" {
			state = "dead"
		}
		out.Nodes = append(out.Nodes, apiv1.NodeStatus{ID: id, State: state, HTTPAddr: info.HTTPAddr,
			RaftAddr: info.RaftAddr, GossipAddr: info.GossipAddr})
	}
	reports := n.gatherReports(ctx, ids, states)
	out.Healthy = st.Initialized()
	for s, reps := range st.Placement {
		ss := apiv1.ShardStatus{ID: s, Replicas: reps, Want: min(st.Replicas, len(ids))}
		for _, id := range reps {
			if states[id] == "alive" {
				ss.LiveReplicas++
			}
			for _, rr := range reports[id] {
				if int(rr.Shard) == s && rr.State == "Leader" {
					ss.Leader, ss.AppliedIndex = id, rr.Applied
				}
			}
		}
		if ss.Leader == "" || ss.LiveReplicas < min(st.Replicas, len(reps)) || len(reps) < st.Replicas {
			out.Healthy = false
		}
		out.Shards = append(out.Shards, ss)
	}
	return out
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

// Ready reports whether every local replica knows a leader (the /readyz condition).
func (n *Node) Ready() (bool, string) {
	if !n.meta.State().Initialized() {
		return false, "cluster not formed yet"
	}
	for _, s := range n.LocalShards() {
		r, ok := n.Replica(s)
		if !ok {
			continue
		}
		if r.FSM.Halted() {
			return false, "a replica halted"
		}
		if r.Leader() == "" {
			return false, "a local shard has no leader"
		}
	}
	return true, ""
}
