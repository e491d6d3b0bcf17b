package server

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/cluster"
	"github.com/memcluster/memcluster/memory"
)

// Operator routes: members, shards, rebalancing. Reading them needs a reader token (like cluster status);
// changing them an admin token. None touches tenant data.

func noTenant[B any](*decoded[B]) scope { return scope{none: true} }

func (s *Server) routeAdmin() {
	handle(s, endpoint{"GET", apiv1.PathNodes, "node_list", RoleReader, userNone, bodyNone}, noTenant[noFields],
		func(w http.ResponseWriter, r *http.Request, _ *decoded[noFields]) {
			writeJSON(w, http.StatusOK, apiv1.NodesResponse{Nodes: s.c.Status(r.Context()).Nodes})
		})
	handle(s, endpoint{"GET", apiv1.PathShards, "shard_list", RoleReader, userNone, bodyNone}, noTenant[noFields],
		func(w http.ResponseWriter, r *http.Request, _ *decoded[noFields]) {
			st := s.c.Status(r.Context())
			writeJSON(w, http.StatusOK, apiv1.ShardsResponse{Shards: st.Shards, Moves: st.Moves})
		})
	handle(s, endpoint{"POST", apiv1.PathNodeDrain, "node_drain", RoleAdmin, userNone, bodyOptional}, noTenant[noFields],
		func(w http.ResponseWriter, r *http.Request, _ *decoded[noFields]) {
			s.setNodeState(w, r, cluster.NodeDraining, false)
		})
	handle(s, endpoint{"DELETE", apiv1.PathNodeDrain, "node_undrain", RoleAdmin, userNone, bodyNone}, noTenant[noFields],
		func(w http.ResponseWriter, r *http.Request, _ *decoded[noFields]) { s.setNodeState(w, r, "", false) })
	handle(s, endpoint{"DELETE", apiv1.PathNode, "node_remove", RoleAdmin, userNone, bodyNone}, noTenant[noFields],
		func(w http.ResponseWriter, r *http.Request, _ *decoded[noFields]) {
			if force, ok := boolParam(w, r, "force"); ok {
				s.setNodeState(w, r, cluster.NodeRemoved, force)
			}
		})
	handle(s, endpoint{"POST", apiv1.PathTransferLeader, "transfer_leader", RoleAdmin, userNone, bodyRequired},
		noTenant[apiv1.TransferLeaderRequest], s.handleTransferLeader)
	handle(s, endpoint{"POST", apiv1.PathRebalance, "rebalance", RoleAdmin, userNone, bodyRequired},
		noTenant[apiv1.RebalanceRequest], s.handleRebalance)
	handle(s, endpoint{"POST", apiv1.PathShardSplit, "shard_split", RoleAdmin, userNone, bodyOptional},
		noTenant[apiv1.SplitRequest], s.handleSplit)
}

func (s *Server) setNodeState(w http.ResponseWriter, r *http.Request, state string, force bool) {
	id := r.PathValue("node_id")
	if err := s.opts.Limits.ValidateID("node_id", id, true); err != nil {
		s.fail(w, r, err)
		return
	}
	res, err := s.c.SetNodeState(r.Context(), id, state, force)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("audit", "op", "node_state", "principal", principalOf(r.Context()).name, "node", id, "state", res.State,
		"force", force, "lost", res.Lost)
	writeJSON(w, http.StatusOK, res)
}

// handleSplit splits a shard; waiting (the default) answers once the new shard serves, within a minute.
func (s *Server) handleSplit(w http.ResponseWriter, r *http.Request, c *decoded[apiv1.SplitRequest]) {
	shard, ok := shardParam(w, r, s)
	if !ok {
		return
	}
	wait := c.body.Wait == nil || *c.body.Wait
	ctx, cancel := context.WithTimeout(r.Context(), 50*time.Second)
	defer cancel()
	res, err := s.c.SplitShard(ctx, shard, wait)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("audit", "op", "shard_split", "principal", principalOf(r.Context()).name, "shard", shard, "child", res.Child)
	writeJSON(w, http.StatusOK, res)
}

func shardParam(w http.ResponseWriter, r *http.Request, s *Server) (uint32, bool) {
	shard, err := strconv.ParseUint(r.PathValue("shard"), 10, 32)
	if err != nil {
		s.fail(w, r, memory.FieldError("shard", "not a shard number: %q", r.PathValue("shard")))
		return 0, false
	}
	return uint32(shard), true
}

func (s *Server) handleTransferLeader(w http.ResponseWriter, r *http.Request, c *decoded[apiv1.TransferLeaderRequest]) {
	shard, ok := shardParam(w, r, s)
	if !ok {
		return
	}
	if c.body.To == "" {
		s.fail(w, r, memory.FieldError("to", "required: the node to lead the shard"))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	if err := s.c.TransferLeader(ctx, shard, c.body.To); err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, apiv1.TransferLeaderResponse{Shard: int(shard), Leader: c.body.To})
}

func (s *Server) handleRebalance(w http.ResponseWriter, r *http.Request, c *decoded[apiv1.RebalanceRequest]) {
	if c.body.Paused == nil {
		s.fail(w, r, memory.FieldError("paused", "required: true to pause, false to resume"))
		return
	}
	if err := s.c.SetPaused(r.Context(), *c.body.Paused); err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, apiv1.RebalanceResponse{Paused: *c.body.Paused})
}
