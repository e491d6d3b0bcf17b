package storage

import (
	"encoding/binary"
	"fmt"

	"github.com/memcluster/memcluster/internal/formats"
)

// Key layout (format version 1). Every key starts with a one-byte space tag:
//
//	"\x00fmt"                          -> uint32 key format version of the whole DB
//	's' shard(u32) 'a'                 -> applied raft index(u64) + term(u64) of the shard state
//	's' shard(u32) 'r'                 -> restore-in-progress marker
//	's' shard(u32) 'd' ulen(uvarint) user id -> encoded memory record
//	's' shard(u32) 'q' request id       -> result of a non-idempotent-looking command (deleted count, u64)
//	                                       pruned by CmdPrune once the id's ULID time is past the retention
//	's' shard(u32) 'm'                 -> the hash range the shard owns (split.go); absent: its whole bucket
//	's' shard(u32) 'b'                 -> a shard born by a split: the voters of its first raft configuration
//	's' shard(u32) space ulen user key  -> a user's side record, space one of 'f' facts, 'g' patterns,
//	                                       'h' history, 'l' working sessions, 'p' samples, 'k' cold segments,
//	                                       'j' archive reads, 'o' workspace files, 'i' revision
//	                                       (usertxn.go); all inside the snapshot range ['d', 'r')
//	'r' shard(u32) ...                 -> the shard's raft log and stable store (raftstore owns the rest)
//	'n' name                           -> node-local values (node id, known peers, each shard's restore epoch)
//
// Length-prefixing the user keeps one user's memories contiguous and no user's range a prefix of another's;
// ids are ULIDs, so a user's memories sort by creation time.
const (
	KeyFormatVersion = formats.Keys

	spaceShard = 's'
	spaceRaft  = 'r'
	spaceNode  = 'n'

	subApplied = 'a'
	subRestore = 'r'
	subData    = 'd'
	subRequest = 'q'
	subRange   = 'm' // inside the snapshot range: a replica restored from a snapshot learns its range
	subBirth   = 'b' // outside it: only the nodes that applied the split start the group from it
)

var keyFormat = []byte("\x00fmt")

func shardPrefix(shard uint32) []byte {
	k := make([]byte, 5, 32)
	k[0] = spaceShard
	binary.BigEndian.PutUint32(k[1:], shard)
	return k
}

// ShardRange returns the [start, end) bounds of everything a shard's state holds (not its raft log).
func ShardRange(shard uint32) (start, end []byte) {
	return shardPrefix(shard), shardPrefix(shard + 1)
}

func appliedKey(shard uint32) []byte { return append(shardPrefix(shard), subApplied) }
func restoreKey(shard uint32) []byte { return append(shardPrefix(shard), subRestore) }
func rangeKey(shard uint32) []byte   { return append(shardPrefix(shard), subRange) }
func birthKey(shard uint32) []byte   { return append(shardPrefix(shard), subBirth) }

// epochKey counts the snapshot restores that replaced a shard's state here (DB.RestoreEpoch). It is node-local,
// outside the shard's range: replicas reach the same state by different paths, and a dropped replica's count
// stays, so an index left on disk by it is never taken for one of a later restore.
func epochKey(shard uint32) []byte {
	return binary.BigEndian.AppendUint32(NodeKey("restore-epoch/"), shard)
}

// requestKey records the outcome of a request, so a retried proposal answers what the first one did.
func requestKey(shard uint32, id string) []byte {
	return append(append(shardPrefix(shard), subRequest), id...)
}

// stateRange bounds everything a snapshot carries: records ('d') and request results ('q'), not the applied
// index or the restore marker, which the snapshot header and restore itself write.
func stateRange(shard uint32) (start, end []byte) {
	return append(shardPrefix(shard), subData), append(shardPrefix(shard), subRestore)
}

// dataRange bounds every memory record of a shard.
func dataRange(shard uint32) (start, end []byte) {
	return append(shardPrefix(shard), subData), append(shardPrefix(shard), subData+1)
}

// userPrefix is the prefix of every record of user in shard.
func userPrefix(shard uint32, user string) []byte {
	k := append(shardPrefix(shard), subData)
	k = binary.AppendUvarint(k, uint64(len(user)))
	return append(k, user...)
}

// MemoryKey is the key of one memory record.
func MemoryKey(shard uint32, user, id string) []byte {
	return append(userPrefix(shard, user), id...)
}

// UserRange bounds every record of user in shard.
func UserRange(shard uint32, user string) (start, end []byte) {
	p := userPrefix(shard, user)
	return p, prefixEnd(p)
}

// DecodeMemoryKey splits a record key into shard, user and id.
func DecodeMemoryKey(k []byte) (shard uint32, user, id string, err error) {
	if len(k) < 6 || k[0] != spaceShard || k[5] != subData {
		return 0, "", "", fmt.Errorf("%w: %x", ErrBadKey, k)
	}
	shard = binary.BigEndian.Uint32(k[1:5])
	n, w := binary.Uvarint(k[6:])
	// Canonical only: a non-minimal varint would give two keys for one (shard, user, id).
	if w <= 0 || w != len(binary.AppendUvarint(nil, n)) || uint64(len(k)-6-w) < n {
		return 0, "", "", fmt.Errorf("%w: user length in %x", ErrBadKey, k)
	}
	rest := k[6+w:]
	return shard, string(rest[:n]), string(rest[n:]), nil
}

// RaftPrefix is the prefix under which a shard's raft log and stable store live.
func RaftPrefix(shard uint32) []byte {
	k := make([]byte, 5)
	k[0] = spaceRaft
	binary.BigEndian.PutUint32(k[1:], shard)
	return k
}

// NodeKey is the key of a node-local value.
func NodeKey(name string) []byte { return append([]byte{spaceNode}, name...) }

// prefixEnd returns the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil // p was all 0xff: no upper bound
}
