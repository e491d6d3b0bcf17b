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
	// ErrUnknownNode and ErrUnknownShard name a member or shard the cluster does not have.
	ErrUnknownNode  = errors.New("unknown node")
	ErrUnknownShard = errors.New("unknown shard")
	// ErrRefused is an operator action refused because of the cluster's state; the message says why.
	ErrRefused = errors.New("refused")
	// ErrRemoved is returned by a node that was removed from the cluster.
	ErrRemoved = errors.New("this node was removed from the cluster")
	// ErrOutcomeUnknown is a write whose caller stopped waiting once its leader had taken it, or once it was sent
	// to its leader: it may still be applied. Read before writing again what is not idempotent.
	ErrOutcomeUnknown = errors.New("write outcome unknown: the shard's leader took it and it may still be applied")
)
