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
// build cannot join the cluster again.

// RecordFormat is the record format this node's proposals write: storage.RecordHalf when every member reads it.
func (n *Node) RecordFormat() storage.RecordFormat {
	if n.recordsHalf.Load() {
		return storage.RecordHalf
	}
	return storage.RecordF32
}

// updateRecordFormat decides RecordFormat from the members in the meta state.
func (n *Node) updateRecordFormat() {
	half := everyMemberReads(n.meta.State(), storage.RecordHalf)
	if n.recordsHalf.Swap(half) != half {
		n.log.Info("memory records: proposals now write format "+fmt.Sprint(n.RecordFormat()),
			"every_member_reads_half", half)
	}
}

// everyMemberReads reports whether st has members and each one not removed reads records of format f.
func everyMemberReads(st MetaState, f storage.RecordFormat) bool {
	if len(st.Nodes) == 0 {
		return false
	}
	for id, info := range st.Nodes {
		if st.StateOf(id) != NodeRemoved && info.Records < int(f) {
			return false
		}
	}
	return true
}
