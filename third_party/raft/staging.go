// Copyright (c) HashiCorp, Inc.
// SPDX-License-Identifier: MPL-2.0

package raft

// LogStager is an optional interface of a LogStore (added by the memcluster fork, see MEMCLUSTER.md). A store
// that implements it can hold a leader's new entries in memory, readable through GetLog, before StoreLogs has
// made them durable. The leader then sends new entries to its followers while it writes them itself (Raft
// thesis §10.2.1) and counts itself towards their commitment only once its own write has returned: an entry is
// still committed only when a majority has it on disk, but a write waits for one disk write in the majority
// instead of the leader's followed by a follower's.
type LogStager interface {
	// StageLogs makes logs readable through GetLog until StoreLogs (which follows with the same entries) or
	// UnstageLogs returns.
	StageLogs(logs []*Log)
	// UnstageLogs forgets the staged entries after StoreLogs failed to write them.
	UnstageLogs()
}
