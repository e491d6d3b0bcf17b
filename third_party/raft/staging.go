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

// trimLogsAfterInstall leaves the log as Raft's rule for an installed snapshot says (added by the memcluster
// fork, see MEMCLUSTER.md). If the log holds the snapshot's last entry, the entries after it stay: this follower
// may have acknowledged them, so a majority may count on them. Only the entries before that one go, and that one
// stays too, because the leader's next append names it as the previous entry. Otherwise every entry goes, and
// the last log is the snapshot's: upstream kept its old last log, so a follower that had emptied or compacted its
// log claimed entries it no longer held. It then refused every append (the leader re-sent the snapshot forever)
// or accepted one whose previous entry matched the stale claim and panicked applying what was gone
// (hashicorp/raft#697). Errors are logged and the install stands, as upstream's compaction does.
func (r *Raft) trimLogsAfterInstall(snapIndex, snapTerm uint64) {
	var entry Log
	if err := r.logs.GetLog(snapIndex, &entry); err == nil && entry.Term == snapTerm {
		if snapIndex > 1 {
			lastLogIdx, _ := r.getLastLog()
			if err := r.compactLogsWithTrailing(snapIndex-1, lastLogIdx, r.config().TrailingLogs); err != nil {
				r.logger.Error("failed to compact logs", "error", err)
			}
		}
		return
	}
	first, err := r.logs.FirstIndex()
	if err == nil {
		var last uint64
		if last, err = r.logs.LastIndex(); err == nil && last > 0 {
			r.logger.Info("removing all old logs from log store")
			err = r.logs.DeleteRange(first, last)
		}
	}
	if err != nil {
		r.logger.Error("failed to reset logs", "error", err)
		return
	}
	r.setLastLog(0, 0)
}
