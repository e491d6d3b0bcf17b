// Copyright (c) HashiCorp, Inc.
// SPDX-License-Identifier: MPL-2.0

package raft

import "errors"

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

// trimLogsAfterInstall leaves the log as Raft's rule for an installed snapshot says (added by the memcluster
// fork, see MEMCLUSTER.md). If the log holds the snapshot's last entry, the entries after it stay: this follower
// may have acknowledged them, so a majority may count on them. Only the entries before that one go, and that one
// stays too, because the leader's next append names it as the previous entry. If the log lacks that entry or
// holds another term's, every entry goes (none after it can have been acknowledged: the follower applied less
// than the snapshot, and appends are contiguous after what it applied) and the snapshot's last entry stands for
// the last log. Upstream kept its old last log, so a follower that had emptied or compacted its log claimed
// entries it no longer held. It then refused every append (the leader re-sent the snapshot forever) or accepted
// one whose previous entry matched the stale claim and panicked applying what was gone, as a follower or once
// elected (hashicorp/raft#697). Errors are logged and the install stands, as upstream's compaction does.
func (r *Raft) trimLogsAfterInstall(snapIndex, snapTerm uint64) {
	var entry Log
	err := r.logs.GetLog(snapIndex, &entry)
	switch {
	case err == nil && entry.Term == snapTerm:
		lastLogIdx, _ := r.getLastLog()
		if snapIndex > 1 {
			if err := r.compactLogsWithTrailing(snapIndex-1, lastLogIdx, r.config().TrailingLogs); err != nil {
				r.logger.Error("failed to compact logs", "error", err)
			}
		}
		r.reloadConfigurationsAfter(snapIndex, lastLogIdx)
		return
	case err != nil && !errors.Is(err, ErrLogNotFound):
		r.logger.Error("failed to read the log at the installed snapshot's index; log left as it is", "error", err)
		return
	}
	if err := r.removeOldLogs(); err != nil {
		r.logger.Error("failed to reset logs", "error", err)
		return
	}
	r.setLastLog(0, 0)
}

// reloadConfigurationsAfter takes up again the configuration changes of the log entries kept after an installed
// snapshot (from+1..to), as NewRaft does at start: the install set the snapshot's, which those entries follow.
func (r *Raft) reloadConfigurationsAfter(from, to uint64) {
	for idx := from + 1; idx <= to; idx++ {
		var entry Log
		if err := r.logs.GetLog(idx, &entry); err != nil {
			r.logger.Error("failed to read a log entry kept after an installed snapshot", "index", idx, "error", err)
			return
		}
		if err := r.processConfigurationLogEntry(&entry); err != nil {
			r.logger.Error("failed to take up a configuration kept after an installed snapshot", "index", idx, "error", err)
			return
		}
	}
}

// snapshotBehindApplied reports whether a leader's snapshot at index holds nothing this follower has not
// applied (added by the memcluster fork, see MEMCLUSTER.md). A new leader that finds no common entry with a
// follower in its own, compacted log sends its snapshot, which may be older than what the follower applied.
// Upstream restored it anyway: the state machine went back to the snapshot, to apply the entries after it again
// from a log that its own snapshots may have compacted (log not found in processLogs). Now the install keeps the
// state machine and the log and answers success, and appends whose entries the follower applied and no longer
// holds are taken as matching (appliedHere).
func (r *Raft) snapshotBehindApplied(index uint64) bool {
	applied := r.getLastApplied()
	if index > applied || applied > r.getCommitIndex() {
		// Not behind, or the state machine holds what is not known committed (a user restore on a leader that
		// lost its leadership before the restore's entry committed): the leader's snapshot must replace it.
		return false
	}
	r.logger.Info("snapshot is not ahead of what is applied here; state machine and log kept",
		"snapshot-index", index, "applied", applied)
	return true
}

// appliedHere reports whether the log entry at idx, which reading answered err, is one this replica applied, knows
// committed and no longer holds (added by the memcluster fork, see MEMCLUSTER.md). A committed entry is the
// leader's: an append may take it as its previous entry, and skip it among its entries. (Applied is not enough:
// a user restore on a leader applies an index it burned, before any entry there commits.)
func (r *Raft) appliedHere(idx uint64, err error) bool {
	return errors.Is(err, ErrLogNotFound) && idx <= min(r.getLastApplied(), r.getCommitIndex())
}
