package storage

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/memcluster/memcluster/shardmap"
)

// A split hands the upper part of a shard's hash range to a new shard. It is one raft entry in the parent's
// log, so every parent replica applies it at the same index, in one Pebble batch:
//   - the records and side state of the users in the child's range leave the parent's keyspace and are
//     written, unchanged, under the child's id;
//   - request results are copied, so a retried delete answers alike on either side;
//   - the parent records its new range, the child its range, applied index (1, 1) and the voters of its first
//     configuration (the birth record): the cluster starts the child's raft group from exactly this state on
//     every one of those voters, like a bootstrap.
//
// The child's keyspace is this node's, not the parent's state: it is written only where the child has no state
// yet. A parent replica added after the split replays the entry from the leader's log, and its node may already
// run a replica of the child, far past index 1: that replica is left alone. Either way the parent's state after
// the entry is the same on every replica.
//
// From that entry on, the parent answers ErrWrongShard to any command or read for the child's users.

// SplitPayload is the entry's payload, decided by the proposer.
type SplitPayload struct {
	Child   uint32         `json:"child"`
	Buckets uint32         `json:"buckets"`
	Keep    shardmap.Range `json:"keep"`   // the parent's range after the split
	Give    shardmap.Range `json:"give"`   // the child's range: it follows Keep in the same bucket
	Voters  []string       `json:"voters"` // the child's first raft configuration
}

func (p SplitPayload) validate() error {
	switch {
	case p.Buckets == 0 || p.Keep.Bucket >= p.Buckets:
		return errors.New("split: bucket out of range")
	case p.Keep.Bucket != p.Give.Bucket || p.Keep.First > p.Keep.Last || p.Give.First > p.Give.Last ||
		p.Keep.Last+1 != p.Give.First:
		return fmt.Errorf("split: ranges %v and %v are not adjacent halves", p.Keep, p.Give)
	case len(p.Voters) == 0:
		return errors.New("split: no voters for the child")
	}
	return nil
}

// EncodeSplit encodes a split.
func EncodeSplit(p SplitPayload) ([]byte, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	return encodeJSON(CmdSplit, p)
}

// Owned is the hash range a shard owns.
type Owned struct {
	Buckets uint32         `json:"buckets"`
	Range   shardmap.Range `json:"range"`
}

// Owns reports whether user falls in o.
func (o *Owned) Owns(user string) bool {
	return o == nil || o.Range.Contains(shardmap.Locate(user, o.Buckets))
}

// OwnedRange reads the range a shard owns; ok is false for a shard that never split (it owns its whole
// bucket, as the cluster's map says).
func (d *DB) OwnedRange(shard uint32) (o Owned, ok bool, err error) {
	v, err := d.get(rangeKey(shard))
	if err != nil || v == nil {
		return o, false, err
	}
	if err := json.Unmarshal(v, &o); err != nil {
		return o, false, fmt.Errorf("%w: range of shard %d: %v", ErrBadRecord, shard, err)
	}
	return o, true, nil
}

// Birth returns the first voters of a shard born by a split on this node (nil otherwise).
func (d *DB) Birth(shard uint32) ([]string, error) {
	v, err := d.get(birthKey(shard))
	if err != nil || v == nil {
		return nil, err
	}
	var voters []string
	if err := json.Unmarshal(v, &voters); err != nil {
		return nil, fmt.Errorf("%w: birth of shard %d: %v", ErrBadRecord, shard, err)
	}
	return voters, nil
}

func (d *DB) loadOwned(shard uint32) (*Owned, error) {
	o, ok, err := d.OwnedRange(shard)
	if err != nil || !ok {
		return nil, err
	}
	return &o, nil
}

// splitApplies decides what a split entry does on a shard owning cur (nil: its whole bucket). A split the
// shard already applied (a proposer's retry) does nothing; one of a range the shard does not own is refused.
func splitApplies(cur *Owned, p SplitPayload) (apply bool, err error) {
	whole := shardmap.Range{Bucket: p.Keep.Bucket, First: p.Keep.First, Last: p.Give.Last}
	have := shardmap.Whole(p.Keep.Bucket)
	if cur != nil {
		if cur.Buckets != p.Buckets {
			return false, fmt.Errorf("%w: split over %d buckets, shard has %d", ErrWrongShard, p.Buckets, cur.Buckets)
		}
		have = cur.Range
	}
	switch have {
	case p.Keep:
		return false, nil
	case whole:
		return true, nil
	}
	return false, fmt.Errorf("%w: split of %v, shard owns %v", ErrWrongShard, whole, have)
}

// applySplit moves the child's users out of shard, within b. It returns the parent's new range and whether it
// wrote the child's first state (false: the child already has state on this node).
func applySplit(b *pebble.Batch, shard uint32, p SplitPayload, ch *changes) (*Owned, bool, error) {
	give := &Owned{Buckets: p.Buckets, Range: p.Give}
	_, closer, err := b.Get(appliedKey(p.Child))
	born := errors.Is(err, pebble.ErrNotFound)
	if err == nil {
		closer.Close()
	} else if !born {
		return nil, false, diskErr("read child's applied index", err)
	}
	if born {
		clo, chi := ShardRange(p.Child)
		if err := b.DeleteRange(clo, chi, nil); err != nil { // nothing may linger under a new shard's id
			return nil, false, err
		}
	}
	lo, hi := stateRange(shard)
	it, err := b.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, false, diskErr("scan shard for split", err)
	}
	// The iterator sees the batch as it was when created, so writing to b while iterating is safe.
	childPrefix := shardPrefix(p.Child)
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		move, copyOnly, err := splitKey(k, give)
		if err != nil {
			it.Close()
			return nil, false, err
		}
		if !move && !copyOnly {
			continue
		}
		if born {
			ck := append(append([]byte(nil), childPrefix...), k[len(childPrefix):]...)
			if err := b.Set(ck, it.Value(), nil); err != nil {
				it.Close()
				return nil, false, err
			}
		}
		if copyOnly {
			continue
		}
		if k[5] == subData {
			_, user, id, _ := DecodeMemoryKey(k)
			ch.dels = append(ch.dels, Ref{UserID: user, ID: id})
		}
		if err := b.Delete(k, nil); err != nil {
			it.Close()
			return nil, false, err
		}
	}
	if err := it.Close(); err != nil {
		return nil, false, diskErr("scan shard for split", err)
	}
	keep := &Owned{Buckets: p.Buckets, Range: p.Keep}
	if err := b.Set(rangeKey(shard), mustJSON(keep), nil); err != nil {
		return nil, false, err
	}
	if !born {
		return keep, false, nil
	}
	voters, _ := json.Marshal(p.Voters)
	for _, kv := range []struct{ k, v []byte }{
		{rangeKey(p.Child), mustJSON(give)}, {appliedKey(p.Child), appliedValue(1, 1)}, {birthKey(p.Child), voters},
	} {
		if err := b.Set(kv.k, kv.v, nil); err != nil {
			return nil, false, err
		}
	}
	return keep, true, nil
}

// splitKey says what a split does with one key of the parent's state: move it (a record or side record of a
// user in the child's range) or copy it (a request result).
func splitKey(k []byte, give *Owned) (move, copyOnly bool, err error) {
	switch k[5] {
	case subRequest:
		return false, true, nil
	case subRange:
		return false, false, nil
	}
	rest := k[6:]
	n, w := binary.Uvarint(rest)
	if w <= 0 || uint64(len(rest)-w) < n {
		return false, false, fmt.Errorf("%w: user in %x", ErrBadKey, k)
	}
	return give.Owns(string(rest[w : w+int(n)])), false, nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain structs of numbers
	}
	return b
}
