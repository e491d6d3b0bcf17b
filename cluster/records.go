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

// RecordFormat is the record format this node's proposals write: the newest every member reads.
func (n *Node) RecordFormat() storage.RecordFormat {
	return max(storage.RecordFormat(n.records.Load()), storage.RecordF32) // zero before the meta state is read
}

// updateRecordFormat decides RecordFormat from the members in the meta state.
func (n *Node) updateRecordFormat() {
	f := clusterRecords(n.meta.State())
	if old := storage.RecordFormat(n.records.Swap(uint32(f))); old != f {
		n.log.Info("memory records: proposals now write format "+fmt.Sprint(f), "was", fmt.Sprint(old))
	}
}

// clusterRecords is the newest record format every member of st reads, at most this build's newest:
// storage.RecordF32 when st has no members or a member names none (a build from before members named it). A
// member removed does not count.
func clusterRecords(st MetaState) storage.RecordFormat {
	if len(st.Nodes) == 0 {
		return storage.RecordF32
	}
	f := storage.RecordNewest
	for id, info := range st.Nodes {
		if st.StateOf(id) != NodeRemoved {
			// Clamped as an int: a format number past a byte must not wrap to an old one.
			f = storage.RecordFormat(min(int(f), max(info.Records, int(storage.RecordF32))))
		}
	}
	return f
}
