package apiv1

// Operator routes (admin tokens): members, shards and rebalancing.
const (
	PathNodes          = "/v1/nodes"                          // GET: every member with state, zone, replicas, leaders, bytes
	PathNodeDrain      = "/v1/nodes/{node_id}/drain"          // POST: drain; DELETE: stop draining
	PathNode           = "/v1/nodes/{node_id}"                // DELETE[?force=true]: remove for good
	PathShards         = "/v1/shards"                         // GET: every shard with replicas, leader, progress
	PathTransferLeader = "/v1/shards/{shard}/transfer-leader" // POST {"to": NODE}
	PathRebalance      = "/v1/cluster/rebalance"              // POST {"paused": true|false}
	PathShardSplit     = "/v1/shards/{shard}/split"           // POST {"wait": true|false}
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

// SplitRequest is the body of POST /v1/shards/{shard}/split. With Wait (the default) the answer comes once the
// child shard serves its users; without, once the split is recorded.
type SplitRequest struct {
	Wait *bool `json:"wait,omitempty"`
}

// SplitResponse answers a split: the parent keeps Range, the new shard Child owns ChildRange.
type SplitResponse struct {
	Shard      int       `json:"shard"`
	Child      int       `json:"child"`
	Range      HashRange `json:"range"`
	ChildRange HashRange `json:"child_range"`
	Done       bool      `json:"done"` // the child serves its users (false: still under way, with wait false)
	Shards     int       `json:"shards"`
	MapVersion uint64    `json:"map_version"`
}

// HashRange is the part of the user-hash space a shard owns: positions First..Last (hex, inclusive) of one
// bucket; Fraction is the share of the bucket.
type HashRange struct {
	Bucket   uint32  `json:"bucket"`
	First    string  `json:"first"`
	Last     string  `json:"last"`
	Fraction float64 `json:"fraction"`
}

// Backups (admin tokens). GET streams a backup of the whole cluster (application/octet-stream, the backup
// package's format); POST takes one as its body and restores it.
const (
	PathBackup  = "/v1/backup"         // GET[?cold=refs]
	PathRestore = "/v1/backup/restore" // POST[?force=true], body: a backup file
)

// BackupRestoreResponse answers a restore.
type BackupRestoreResponse struct {
	Shards      int     `json:"shards"`
	Memories    uint64  `json:"memories"`
	Bytes       int64   `json:"bytes"`
	ColdObjects int     `json:"cold_objects"`
	Seconds     float64 `json:"seconds"`
}
