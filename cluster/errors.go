package cluster

import "errors"

// Sentinel errors of the cluster package.
var (
	// ErrNotLeader is returned when an operation needs the shard leader and this replica is not it.
	ErrNotLeader = errors.New("not the shard leader")
	// ErrNoReplica is returned when this node holds no replica of the shard.
	ErrNoReplica = errors.New("no local replica of the shard")
	// ErrNoLeader is returned when a shard has no known leader (an election is under way or quorum is lost).
	ErrNoLeader = errors.New("shard has no leader")
	// ErrNodeIDMismatch is returned when the data dir belongs to another node id.
	ErrNodeIDMismatch = errors.New("data dir belongs to another node")
	// ErrStopped is returned after the node or replica has been stopped.
	ErrStopped = errors.New("stopped")
	// ErrBadConfig is returned for an invalid Config; the message names the field.
	ErrBadConfig = errors.New("invalid cluster config")
)
