package cluster

import "fmt"

// A replica whose data this node deleted (it moved away) leaves a marker behind: if the group places a replica
// here again, the new, empty replica must not vote until it has heard from the group's leader. The votes and
// entries its predecessor acknowledged counted toward the group's quorums, and an empty log would grant a vote
// to a candidate lacking entries the old replica held (voteGuard). A replica that never held the group here
// gave no such promise and votes as raft decides: an initial voter that missed its bootstrap must be able to
// elect with the other survivors.

func droppedKey(group uint32) string { return fmt.Sprintf("dropped/%d", group) }

// markDropped durably records that this node is about to delete its replica of group. It runs before the data
// is deleted, so a crash in between leaves the marker.
func (n *Node) markDropped(group uint32) error {
	if err := n.db.SetNode(droppedKey(group), []byte{1}); err != nil {
		return fmt.Errorf("mark replica of shard %d dropped: %w", group, err)
	}
	return nil
}

// wasDropped reports whether this node deleted a replica of group before and no replica here has heard from
// the group's leader since. A read error counts as dropped: the guard fails closed.
func (n *Node) wasDropped(group uint32) bool {
	v, err := n.db.GetNode(droppedKey(group))
	if err != nil {
		n.log.Warn("read dropped-replica marker: refusing votes until configured", "shard", group, "err", err)
		return true
	}
	return v != nil
}

// clearDropped removes group's marker once its replica here has a configuration from the leader.
func (n *Node) clearDropped(group uint32) {
	if err := n.db.DeleteNode(droppedKey(group)); err != nil {
		n.log.Warn("clear dropped-replica marker", "shard", group, "err", err)
	}
}
