package sim

import "errors"

// Sentinel errors. A failed Run joins one or more of them with the details.
var (
	// ErrBadOptions names an Options field out of range.
	ErrBadOptions = errors.New("sim: bad options")
	// ErrDropped is what a raft RPC returns when the schedule cuts its link; raft treats it like a network error.
	ErrDropped = errors.New("sim: message dropped by the fault schedule")
	// ErrClosed is returned by RPCs after the simulated network shut down.
	ErrClosed = errors.New("sim: network closed")
	// ErrNoLeader means no replica led within the deadline after the network healed.
	ErrNoLeader = errors.New("sim: no leader")
	// ErrNoConvergence means the healed replicas did not reach the same applied index within the deadline.
	ErrNoConvergence = errors.New("sim: replicas did not converge")
	// ErrNotLinearizable means porcupine found no linearization of some user's history.
	ErrNotLinearizable = errors.New("sim: history not linearizable")
	// ErrDiverged means two converged replicas hold different bytes in the shard's keyspace.
	ErrDiverged = errors.New("sim: replicas diverged")
	// ErrReplayMismatch means snapshot restore plus log replay did not rebuild a replica's keyspace.
	ErrReplayMismatch = errors.New("sim: snapshot + log replay differs from the replica")
	// ErrHalted means a replica's state machine stopped on an entry (it never should here).
	ErrHalted = errors.New("sim: replica halted")
)
