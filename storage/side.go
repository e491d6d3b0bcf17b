package storage

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/memcluster/memcluster/memory"
)

// SideRead is a consistent read of a user's side records: the user's revision and the records under one
// key prefix of one space, both from the same Pebble snapshot.
type SideRead struct {
	Rev   uint64   `json:"rev"`
	Items []SideKV `json:"items"`
}

// ReadSide reads user's records of space whose key starts with prefix, in key order, at most limit of them
// (0: no limit), and the user's revision, as of one instant.
func (d *DB) ReadSide(shard uint32, space byte, user, prefix string, limit int) (SideRead, error) {
	return d.readSide(shard, space, user, prefix, "", limit)
}

// readSide reads the records under prefix whose key sorts after `after` ("": from the first).
func (d *DB) readSide(shard uint32, space byte, user, prefix, after string, limit int) (SideRead, error) {
	var out SideRead
	if !validSideSpace(space) || space == spaceUserRev {
		return out, fmt.Errorf("read side: unknown space %q", space)
	}
	snap := d.db.NewSnapshot()
	defer snap.Close()
	rev, err := readRev(snap, shard, user)
	if err != nil {
		return out, fmt.Errorf("read side: %w", err)
	}
	out.Rev = rev
	lo := SideKey(shard, space, user, prefix)
	hi := prefixEnd(lo)
	if after != "" {
		lo = append(SideKey(shard, space, user, after), 0) // the first key past after's
	}
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return out, err
	}
	defer it.Close()
	base := len(sidePrefix(shard, space, user))
	for ok := it.First(); ok && (limit <= 0 || len(out.Items) < limit); ok = it.Next() {
		out.Items = append(out.Items, SideKV{Space: space, Key: string(it.Key()[base:]),
			Value: append([]byte(nil), it.Value()...)})
	}
	return out, it.Error()
}

// Recent returns user's newest memories of the given types (every type when types is empty), newest first,
// at most limit (0: no limit), without embeddings: ids are ULIDs, so key order is creation order.
func (d *DB) Recent(shard uint32, user string, types []memory.Type, limit int) ([]memory.Memory, error) {
	lo, hi := UserRange(shard, user)
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []memory.Memory
	for ok := it.Last(); ok && (limit <= 0 || len(out) < limit); ok = it.Prev() {
		m, err := DecodeMemory(it.Value())
		if err != nil {
			return nil, fmt.Errorf("recent %x: %w", it.Key(), err)
		}
		if len(types) > 0 && !slices.Contains(types, m.Type) {
			continue
		}
		m.Embedding = nil
		out = append(out, m)
	}
	return out, it.Error()
}

// ScanSide calls fn for every record of space in shard, across users, in key order, until fn returns false.
// Background jobs use it (the idle-session sweeper); requests read one user with ReadSide.
func (d *DB) ScanSide(shard uint32, space byte, fn func(user, key string, value []byte) bool) error {
	if !validSideSpace(space) {
		return fmt.Errorf("scan side: unknown space %q", space)
	}
	lo := append(shardPrefix(shard), space)
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		rest := it.Key()[len(lo):]
		n, w := binary.Uvarint(rest)
		if w <= 0 || uint64(len(rest)-w) < n {
			return fmt.Errorf("%w: side key %x", ErrBadKey, it.Key())
		}
		if !fn(string(rest[w:w+int(n)]), string(rest[w+int(n):]), it.Value()) {
			break
		}
	}
	return it.Error()
}

// Users calls fn with every user that has memory records in shard, in key order, until fn returns false. It
// seeks past each user's records instead of reading them: O(users) seeks, for background jobs.
func (d *DB) Users(shard uint32, fn func(user string) bool) error {
	lo, hi := dataRange(shard)
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; {
		_, user, _, err := DecodeMemoryKey(it.Key())
		if err != nil {
			return err
		}
		if !fn(user) {
			break
		}
		_, end := UserRange(shard, user)
		ok = it.SeekGE(end)
	}
	return it.Error()
}
