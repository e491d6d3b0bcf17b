package sim

import "errors"

// Sentinel errors. A failed Run joins one or more of them with the details.
var (
	// ErrBadOptions names an Options field out of range.
	ErrBadOptions = errors.New("sim: bad options")
	// ErrDropped is what a raft RPC returns when the schedule cuts its link; raft treats it like a network error.
	ErrDropped = errors.New("sim: message dropped by the fault schedule")
	// ErrDiskFault is what a replica's raft log store returns while a disk fault refuses its writes.
	ErrDiskFault = errors.New("sim: raft log write refused by a disk fault")
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
	// ErrRaft697 marks a convergence failure with the signature of hashicorp/raft#697 (open upstream): a
	// follower stuck at the index of the snapshot it installed while the leader is ahead (DESIGN.md).
	ErrRaft697 = errors.New("follower stuck after a snapshot install (hashicorp/raft#697)")
)

// KnownUpstream reports whether err is only the known upstream raft bug: a stuck follower, with the history
// that was recorded still linearizable and no other failure.
func KnownUpstream(err error) bool {
	if !errors.Is(err, ErrRaft697) {
		return false
	}
	for _, e := range []error{ErrNotLinearizable, ErrDiverged, ErrReplayMismatch, ErrHalted, ErrBadOptions} {
		if errors.Is(err, e) {
			return false
		}
	}
	return true
}
