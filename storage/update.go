package storage

import (
	"errors"

	"github.com/cockroachdb/pebble/v2"
)

// EncodeUpdate encodes an update in place: a user transaction (guarded by the user's revision like any other)
// whose puts replace existing memories. A plain CmdPut would bring back a memory deleted between the proposer's
// read and the commit; a delete does not bump the user's revision, so the revision alone cannot catch that.
// Its records are in RecordF32.
func EncodeUpdate(p UserTxnPayload) ([]byte, error) { return Encoder{}.Update(p) }

// Update encodes an update in place.
func (e Encoder) Update(p UserTxnPayload) ([]byte, error) { return e.userTxn(CmdUpdate, p) }

// applyUpdate writes the transaction only if every memory it puts still exists. A missing one is reported as a
// conflict (nothing written): the proposer re-reads, finds the memory gone and answers "not found". The check
// reads the indexed batch, so it is the same on every replica.
func applyUpdate(b *pebble.Batch, shard uint32, p UserTxnPayload, ch *changes) (ApplyResult, error) {
	for _, m := range p.Puts {
		_, closer, err := b.Get(MemoryKey(shard, m.UserID, m.ID))
		if errors.Is(err, pebble.ErrNotFound) {
			rev, err := readRev(b, shard, p.UserID)
			return ApplyResult{Conflict: true, Rev: rev}, err
		}
		if err != nil {
			return ApplyResult{}, diskErr("read memory", err)
		}
		closer.Close()
	}
	return applyUserTxn(b, shard, p, ch)
}
