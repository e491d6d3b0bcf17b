package apiv1

// Operator routes (admin tokens): members, shards and rebalancing.
const (
	PathNodes          = "/v1/nodes"                          // GET: every member with state, zone, replicas, leaders, bytes
	PathNodeDrain      = "/v1/nodes/{node_id}/drain"          // POST: drain; DELETE: stop draining
	PathNode           = "/v1/nodes/{node_id}"                // DELETE[?force=true]: remove for good
	PathShards         = "/v1/shards"                         // GET: every shard with replicas, leader, progress
	PathTransferLeader = "/v1/shards/{shard}/transfer-leader" // POST {"to": NODE}
	PathRebalance      = "/v1/cluster/rebalance"              // POST {"paused": true|false}
)

// NodesResponse lists the members.
type NodesResponse struct {
	Nodes []NodeStatus `json:"nodes"`
}

// NodeStateResponse answers a drain, an undrain or a removal.
type NodeStateResponse struct {
	Node  string `json:"node"`
	State string `json:"state"` // draining, alive, removed
	// Lost names what a forced removal gave up: shards left without a quorum or without another copy.
	Lost []string `json:"lost,omitempty"`
}

// ShardsResponse lists the shards.
type ShardsResponse struct {
	Shards []ShardStatus `json:"shards"`
	Moves  []MoveStatus  `json:"moves"`
}

// TransferLeaderRequest is the body of POST /v1/shards/{shard}/transfer-leader.
type TransferLeaderRequest struct {
	To string `json:"to"`
}

// TransferLeaderResponse answers it once the new leader leads.
type TransferLeaderResponse struct {
	Shard  int    `json:"shard"`
	Leader string `json:"leader"`
}

// RebalanceRequest pauses or resumes rebalancing (repairs of lost replicas go on while paused).
type RebalanceRequest struct {
	Paused *bool `json:"paused"`
}

// RebalanceResponse says the state now.
type RebalanceResponse struct {
	Paused bool `json:"paused"`
}
