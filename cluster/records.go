package cluster

import (
	"fmt"

	"github.com/memcluster/memcluster/storage"
)

// A node of an older build cannot read a record format it does not know: a put written in it would halt that
// node's replicas, and a snapshot holding it would fail there. So a proposer writes the newest format that every
// member of the cluster reads. Each node gossips the newest it reads, the meta leader keeps it in the member's
// NodeInfo, and every node decides from the meta state it holds: during a rolling upgrade records stay in the
// old format until the last node runs the new build (a member dead but not removed counts, as it may come back
// on its old build). Formats are never written back: once records of the new format exist, a node of an older
// build cannot join the cluster again. Raft command formats follow the same rule (an entry an older build cannot
// decode would halt its replica). They live only in the logs, but an older build that joins still halts: the
// proposers write the newer format until the meta state holds the new member and they reconcile, and the log
// after the last snapshot may hold such entries.

// RecordFormat is the record format this node's proposals write: the newest every member reads.
func (n *Node) RecordFormat() storage.RecordFormat {
	return max(storage.RecordFormat(n.records.Load()), storage.RecordF32) // zero before the meta state is read
}

// CommandFormat is the raft command format this node's proposals write: the newest every member reads.
func (n *Node) CommandFormat() storage.CommandFormat {
	return max(storage.CommandFormat(n.commands.Load()), storage.CommandJSON) // zero before the meta state is read
}

// updateFormats decides RecordFormat and CommandFormat from the members in the meta state.
func (n *Node) updateFormats() {
	st := n.meta.State()
	rec, cmd := clusterRecords(st), clusterCommands(st)
	if old := storage.RecordFormat(n.records.Swap(uint32(rec))); old != rec {
		n.log.Info("memory records: proposals now write format "+fmt.Sprint(rec), "was", fmt.Sprint(old))
	}
	if old := storage.CommandFormat(n.commands.Swap(uint32(cmd))); old != cmd {
		n.log.Info("raft commands: proposals now write format "+fmt.Sprint(cmd), "was", fmt.Sprint(old))
	}
}

// clusterRecords is the newest record format every member of st reads, at most this build's newest:
// storage.RecordF32 when st has no members or a member names none (a build from before members named it). A
// member removed does not count.
func clusterRecords(st MetaState) storage.RecordFormat {
	return storage.RecordFormat(everyoneReads(st, int(storage.RecordF32), int(storage.RecordNewest),
		func(i NodeInfo) int { return i.Records }))
}

// clusterCommands is clusterRecords for raft command formats.
func clusterCommands(st MetaState) storage.CommandFormat {
	return storage.CommandFormat(everyoneReads(st, int(storage.CommandJSON), int(storage.CommandNewest),
		func(i NodeInfo) int { return i.Commands }))
}

// everyoneReads is the newest version of a format every member of st not removed reads, by what of gives for
// each (0, a build from before members named it, and anything below oldest count as oldest), within
// [oldest, newest]; oldest when st has no members.
func everyoneReads(st MetaState, oldest, newest int, of func(NodeInfo) int) int {
	if len(st.Nodes) == 0 {
		return oldest
	}
	f := newest
	for id, info := range st.Nodes {
		if st.StateOf(id) != NodeRemoved {
			// Clamped as an int: a format number past a byte must not wrap to an old one.
			f = min(f, max(of(info), oldest))
		}
	}
	return f
}
