package storage

import (
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/oklog/ulid/v2"
)

// Request results ('s' shard 'q' request id, written by once) let a retried delete or forget answer what its
// first application did. A retry comes within seconds of the first proposal, so a result is needed only
// briefly; CmdPrune deletes the old ones so the keyspace does not grow with every delete ever made.
//
// The proposer (the shard's leader) decides the cutoff with its clock and puts it in the payload; replicas
// only compare it with the time part of each request id, so every replica deletes exactly the same keys:
//   - a request id is prunable when it is a ULID in canonical form (26 characters of upper-case Crockford
//     base32, as memory.IDSource makes them) whose time is before the cutoff;
//   - any other id (lower case, another length, not base32: ids a proposer chose by another rule, such as
//     the simulator's) is never pruned and never an error;
//   - at most Max results go per entry (0: no limit), oldest first, so a large backlog is pruned in entries of
//     bounded size; the leader proposes again while prunable results remain.
//
// Nothing but request results is deleted.

// PrunePayload is CmdPrune's payload, decided by the proposer.
type PrunePayload struct {
	// BeforeMS is the cutoff in Unix milliseconds (a ULID's time unit): results of requests whose id was made
	// before it go.
	BeforeMS uint64 `json:"before_ms"`
	// Max bounds the results deleted by this entry; 0: no bound.
	Max int `json:"max,omitempty"`
}

func (p PrunePayload) validate() error {
	switch {
	case p.BeforeMS == 0 || p.BeforeMS > ulid.MaxTime():
		return fmt.Errorf("prune: cutoff %d ms out of range", p.BeforeMS)
	case p.Max < 0:
		return fmt.Errorf("prune: negative max %d", p.Max)
	}
	return nil
}

// PruneBefore returns the payload pruning request results older than cutoff, at most max of them (0: all).
func PruneBefore(cutoff time.Time, max int) PrunePayload {
	return PrunePayload{BeforeMS: ulid.Timestamp(cutoff), Max: max}
}

// EncodePrune encodes a prune of request results.
func EncodePrune(p PrunePayload) ([]byte, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	return encodeJSON(CmdPrune, p)
}

// prunableID reports whether id is a canonical ULID made before beforeMS.
func prunableID(id []byte, beforeMS uint64) bool {
	if len(id) != ulid.EncodedSize {
		return false
	}
	u, err := ulid.ParseStrict(string(id))
	if err != nil || u.String() != string(id) { // ParseStrict also takes lower case
		return false
	}
	return u.Time() < beforeMS
}

// pruneRange bounds the request results that may be prunable: every canonical ULID made before beforeMS sorts
// below the ULID of time beforeMS with zero entropy (the first ten characters encode the time, most
// significant first, in an alphabet whose byte order is its numeric order).
func pruneRange(shard uint32, beforeMS uint64) (lo, hi []byte) {
	var bound ulid.ULID
	_ = bound.SetTime(beforeMS) // validated: at most ulid.MaxTime
	lo = append(shardPrefix(shard), subRequest)
	return lo, requestKey(shard, bound.String())
}

// applyPrune deletes the shard's prunable request results, within b. Keys it does not recognize are left
// alone: a prune never halts a replica.
func applyPrune(b *pebble.Batch, shard uint32, p PrunePayload) (ApplyResult, error) {
	lo, hi := pruneRange(shard, p.BeforeMS)
	it, err := b.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return ApplyResult{}, diskErr("scan request results", err)
	}
	// The iterator sees the batch as it was when created, so deleting while iterating is safe.
	n := 0
	for ok := it.First(); ok && (p.Max == 0 || n < p.Max); ok = it.Next() {
		if !prunableID(it.Key()[len(lo):], p.BeforeMS) {
			continue
		}
		if err := b.Delete(it.Key(), nil); err != nil {
			it.Close()
			return ApplyResult{}, err
		}
		n++
	}
	if err := it.Close(); err != nil {
		return ApplyResult{}, diskErr("scan request results", err)
	}
	return ApplyResult{Deleted: n}, nil
}

// HasPrunable reports whether shard holds a request result that a prune with cutoff would delete. Request ids
// are ULIDs, which sort by time, so this normally reads one key: the oldest.
func (d *DB) HasPrunable(shard uint32, cutoff time.Time) (bool, error) {
	before := ulid.Timestamp(cutoff)
	if before == 0 || before > ulid.MaxTime() {
		return false, nil
	}
	lo, hi := pruneRange(shard, before)
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return false, err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if prunableID(it.Key()[len(lo):], before) {
			return true, nil
		}
	}
	return false, it.Error()
}

// RequestResults counts the request results a shard holds (tests and diagnostics; it reads every one).
func (d *DB) RequestResults(shard uint32) (int, error) {
	lo := append(shardPrefix(shard), subRequest)
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return 0, err
	}
	defer it.Close()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n, it.Error()
}
