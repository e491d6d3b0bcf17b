package storage

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/memcluster/memcluster/memory"
)

// changes collects what a batch did, for the indexes.
type changes struct {
	puts []memory.Memory
	dels []Ref
	born []uint32 // children whose first state a split wrote (SetOnBorn)
}

// diskErr marks a failed Pebble read as ErrDiskIO: the state machine retries the batch instead of halting.
// Errors of the batch itself (Set, Delete) are not marked: they do not depend on the disk.
func diskErr(op string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrDiskIO, op, err)
}

// applyCommand is the one switch over command types. It only writes to b: reads go through the indexed batch
// so that a delete after a put in the same batch sees the put.
func applyCommand(b *pebble.Batch, shard uint32, c Command, ch *changes) (ApplyResult, error) {
	switch c.Type {
	case CmdPut:
		return applyPut(b, shard, c.Puts, c.PutRecords, ch)
	case CmdDelete:
		return once(b, shard, c.Delete.RequestID, func() (ApplyResult, error) { return applyDelete(b, shard, c.Delete, ch) })
	case CmdDeleteUser:
		return once(b, shard, c.DeleteUser.RequestID, func() (ApplyResult, error) {
			return applyDeleteUser(b, shard, c.DeleteUser, ch)
		})
	case CmdSetEmbeddings:
		return applySetEmbeddings(b, shard, c.SetEmbed, ch)
	case CmdUserTxn:
		return applyUserTxn(b, shard, c.UserTxn, ch)
	case CmdUpdate:
		return applyUpdate(b, shard, c.UserTxn, ch)
	case CmdPrune:
		return applyPrune(b, shard, c.Prune)
	}
	return ApplyResult{}, fmt.Errorf("%w: type %d", ErrUnknownCommand, c.Type)
}

// applyPut writes ms; recs, when given, are their records already encoded (the entry's own bytes).
func applyPut(b *pebble.Batch, shard uint32, ms []memory.Memory, recs [][]byte, ch *changes) (ApplyResult, error) {
	for i := range ms {
		var rec []byte
		if len(recs) == len(ms) {
			rec = recs[i]
		} else {
			var err error
			if rec, err = EncodeMemory(&ms[i]); err != nil {
				return ApplyResult{}, err
			}
		}
		if err := b.Set(MemoryKey(shard, ms[i].UserID, ms[i].ID), rec, nil); err != nil {
			return ApplyResult{}, err
		}
		ch.puts = append(ch.puts, ms[i])
	}
	return ApplyResult{}, nil
}

func applyDelete(b *pebble.Batch, shard uint32, p DeletePayload, ch *changes) (ApplyResult, error) {
	n := 0
	for _, id := range p.IDs {
		k := MemoryKey(shard, p.UserID, id)
		_, closer, err := b.Get(k)
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			return ApplyResult{}, diskErr("read memory", err)
		}
		closer.Close()
		if err := b.Delete(k, nil); err != nil {
			return ApplyResult{}, err
		}
		ch.dels = append(ch.dels, Ref{UserID: p.UserID, ID: id})
		n++
	}
	return ApplyResult{Deleted: n}, nil
}

func applyDeleteUser(b *pebble.Batch, shard uint32, p DeleteUserPayload, ch *changes) (ApplyResult, error) {
	lo, hi := UserRange(shard, p.UserID)
	it, err := b.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return ApplyResult{}, diskErr("scan user", err)
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		_, _, id, err := DecodeMemoryKey(it.Key())
		if err != nil {
			it.Close()
			return ApplyResult{}, err
		}
		ch.dels = append(ch.dels, Ref{UserID: p.UserID, ID: id})
		n++
	}
	if err := it.Close(); err != nil {
		return ApplyResult{}, diskErr("scan user", err)
	}
	if err := b.DeleteRange(lo, hi, nil); err != nil {
		return ApplyResult{}, err
	}
	return ApplyResult{Deleted: n}, deleteUserSide(b, shard, p.UserID)
}

func applySetEmbeddings(b *pebble.Batch, shard uint32, p SetEmbeddingsPayload, ch *changes) (ApplyResult, error) {
	for _, u := range p.Items {
		k := MemoryKey(shard, u.UserID, u.ID)
		v, closer, err := b.Get(k)
		if errors.Is(err, pebble.ErrNotFound) {
			continue // deleted since the proposer read it
		}
		if err != nil {
			return ApplyResult{}, diskErr("read memory", err)
		}
		m, err := DecodeMemory(v)
		closer.Close()
		if err != nil {
			return ApplyResult{}, err
		}
		m.Embedding, m.EmbedModel = u.Vector, u.Model
		rec, err := EncodeMemory(&m)
		if err != nil {
			return ApplyResult{}, err
		}
		if err := b.Set(k, rec, nil); err != nil {
			return ApplyResult{}, err
		}
		ch.puts = append(ch.puts, m)
	}
	return ApplyResult{}, nil
}

// once applies a command at most once per request id: a later entry with the same id (the proposer retried
// after losing the answer) returns the recorded result and changes nothing. Results are in the shard's keyspace,
// so every replica answers alike, also after a restart or a snapshot install.
func once(b *pebble.Batch, shard uint32, reqID string, apply func() (ApplyResult, error)) (ApplyResult, error) {
	if reqID == "" {
		return apply()
	}
	k := requestKey(shard, reqID)
	v, closer, err := b.Get(k)
	if err == nil {
		defer closer.Close()
		if len(v) != 8 {
			return ApplyResult{}, fmt.Errorf("%w: request result %x", ErrBadRecord, v)
		}
		return ApplyResult{Deleted: int(binary.BigEndian.Uint64(v))}, nil
	}
	if !errors.Is(err, pebble.ErrNotFound) {
		return ApplyResult{}, diskErr("read request result", err)
	}
	res, err := apply()
	if err != nil {
		return res, err
	}
	return res, b.Set(k, binary.BigEndian.AppendUint64(nil, uint64(res.Deleted)), nil)
}
