package cluster

import (
	"encoding/binary"
	"fmt"

	"github.com/memcluster/memcluster/internal/formats"
	"github.com/memcluster/memcluster/raftstore"
	"github.com/memcluster/memcluster/storage"
)

// A replica whose data this node deleted (it moved away) leaves a marker behind: if the group places a replica
// here again, the new, empty replica must neither vote nor campaign until its log reaches the last index its
// predecessor held (voteGuard). The votes and entries its predecessor acknowledged counted toward the group's
// quorums; an empty log would grant a vote to a candidate lacking entries the old replica held, and a leader's
// snapshot older than the predecessor's removal names this node a voter in a configuration the group left long
// ago. A replica that never held the group here gave no such promise and votes as raft decides: an initial
// voter that missed its bootstrap must be able to elect with the other survivors.
//
// The marker's value is versioned: droppedV2 and the predecessor's last index (8 bytes, big-endian);
// droppedV1, one byte, is the marker of an older node that did not record the index.
const (
	droppedV1 byte = formats.DroppedMarkerOldest
	droppedV2 byte = formats.DroppedMarker
)

func droppedKey(group uint32) string { return fmt.Sprintf("dropped/%d", group) }

// markDropped durably records that this node is about to delete its replica of group, and the last index the
// replicas it deleted held. It runs after the replica stopped and before the data is deleted, so a crash in
// between leaves the marker. The index never goes down: a replica dropped again before it caught up (or a drop
// repeated after a crash, over stores already emptied) holds less than the predecessor it stands for.
func (n *Node) markDropped(group uint32) error {
	held, err := n.heldIndex(group)
	if err != nil {
		return fmt.Errorf("mark replica of shard %d dropped: %w", group, err)
	}
	if dropped, before := n.droppedMark(group); dropped {
		held = max(held, before)
	}
	if err := n.db.SetNode(droppedKey(group), droppedValue(held)); err != nil {
		return fmt.Errorf("mark replica of shard %d dropped: %w", group, err)
	}
	return nil
}

func droppedValue(held uint64) []byte { return binary.BigEndian.AppendUint64([]byte{droppedV2}, held) }

// heldIndex is the last index a stopped replica of group held: its log's last entry, its newest raft snapshot
// or its state machine's applied index, whichever is highest.
func (n *Node) heldIndex(group uint32) (uint64, error) {
	store, err := raftstore.New(n.db.Pebble(), storage.RaftPrefix(group), raftstore.Options{})
	if err != nil {
		return 0, err
	}
	held, err := store.LastIndex()
	if err != nil {
		return 0, err
	}
	applied, _, err := n.db.Applied(group)
	if err != nil {
		return 0, err
	}
	held = max(held, applied)
	_, newest, err := newestSnapshot(n.snapshotDir(group))
	if err != nil {
		return 0, err
	}
	if newest != nil {
		held = max(held, newest.Index)
	}
	return held, nil
}

// droppedMark reports whether this node deleted a replica of group before and no replica here has caught up
// with it since, and the last index that replica held (0: unknown, a marker of an older node). A read error
// counts as dropped with an unknown index: the guard then holds votes back only until the replica has a
// configuration, as before markers recorded the index.
func (n *Node) droppedMark(group uint32) (dropped bool, held uint64) {
	v, err := n.db.GetNode(droppedKey(group))
	switch {
	case err != nil:
		n.log.Warn("read dropped-replica marker: refusing votes until configured", "shard", group, "err", err)
		return true, 0
	case v == nil:
		return false, 0
	default:
		return true, droppedHeld(v)
	}
}

// droppedHeld decodes the last index a marker records: 0 (unknown) for droppedV1 or a value it cannot read.
func droppedHeld(v []byte) uint64 {
	if len(v) == 9 && v[0] == droppedV2 {
		return binary.BigEndian.Uint64(v[1:])
	}
	return 0
}

// clearDropped removes group's marker once its replica here has caught up with its predecessor.
func (n *Node) clearDropped(group uint32) {
	if err := n.db.DeleteNode(droppedKey(group)); err != nil {
		n.log.Warn("clear dropped-replica marker", "shard", group, "err", err)
	}
}
