package storage

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/memcluster/memcluster/memory"
)

// Side spaces hold a user's state beside its memory records: working sessions, facts, patterns, history,
// perceptual samples. Storage gives them no meaning: the proposer (consolidation, via the server) decides
// every value; replicas write them verbatim. Each letter lies inside the snapshot range ['d', 'r').
const (
	SpaceFacts     byte = 'f' // key: fact id            -> fact JSON
	SpacePatterns  byte = 'g' // key: pattern key        -> pattern JSON
	SpaceHistory   byte = 'h' // key: event id (ULID)    -> history event JSON
	SpaceSessions  byte = 'l' // key: run id             -> working session JSON
	SpaceSamples   byte = 'p' // key: signal \x00 time   -> sample value
	SpaceCold      byte = 'k' // key: segment key        -> cold segment (JSON string, base64 of the segment)
	SpaceAccess    byte = 'j' // key: archive entry id   -> reads of the entry (warm-restore counter)
	SpaceWorkspace byte = 'o' // key: agent \x00 path    -> workspace file manifest and bytes (JSON)
	spaceUserRev   byte = 'i' // the user's revision (u64), bumped by every user transaction
)

var sideSpaces = []byte{SpaceFacts, SpacePatterns, SpaceHistory, SpaceSessions, SpaceSamples, SpaceCold, SpaceAccess,
	SpaceWorkspace, spaceUserRev}

// ErrConflict is the result of a user transaction whose expected revision no longer holds: someone changed
// the user's state since the proposer read it. Nothing was written; re-read and decide again.
var ErrConflict = errors.New("user state changed since it was read")

// SideKV is one write to a side space; a nil Value deletes the key.
type SideKV struct {
	Space byte            `json:"space"`
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value,omitempty"`
}

// UserTxnPayload changes one user's memories and side state atomically, if the user's revision is still
// ExpectRev (the revision the proposer read). It is how consolidation commits what it decided.
type UserTxnPayload struct {
	UserID    string   `json:"user_id"`
	ExpectRev uint64   `json:"expect_rev"`
	Deletes   []string `json:"deletes,omitempty"` // memory ids
	Side      []SideKV `json:"side,omitempty"`
	// Puts are memory records, carried in the binary record format after the JSON header.
	Puts []memory.Memory `json:"-"`
}

// EncodeUserTxn encodes a user transaction: uvarint header length, JSON header, then the puts as in CmdPut
// (records in RecordF32).
func EncodeUserTxn(p UserTxnPayload) ([]byte, error) { return Encoder{}.UserTxn(p) }

// UserTxn encodes a user transaction.
func (e Encoder) UserTxn(p UserTxnPayload) ([]byte, error) { return e.userTxn(CmdUserTxn, p) }

func (e Encoder) userTxn(t CommandType, p UserTxnPayload) ([]byte, error) {
	hdr, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode user txn: %w", err)
	}
	puts, err := e.Put(p.Puts)
	if err != nil {
		return nil, err
	}
	buf := []byte{commandVersion, byte(t)}
	buf = binary.AppendUvarint(buf, uint64(len(hdr)))
	buf = append(buf, hdr...)
	return append(buf, puts[2:]...), nil
}

func decodeUserTxn(p []byte) (UserTxnPayload, error) {
	var out UserTxnPayload
	n, w := binary.Uvarint(p)
	if w <= 0 || n > uint64(len(p)-w) {
		return out, errors.New("user txn header length")
	}
	if err := strictJSON(p[w:w+int(n)], &out); err != nil {
		return out, err
	}
	for _, kv := range out.Side {
		if !validSideSpace(kv.Space) || kv.Space == spaceUserRev {
			return out, fmt.Errorf("side space %q", kv.Space)
		}
	}
	puts, _, err := decodePuts(p[w+int(n):])
	if err != nil {
		return out, err
	}
	for _, m := range puts {
		if m.UserID != out.UserID {
			return out, fmt.Errorf("put of user %q in a transaction of %q", m.UserID, out.UserID)
		}
	}
	out.Puts = puts
	return out, nil
}

func validSideSpace(s byte) bool {
	for _, v := range sideSpaces {
		if v == s {
			return true
		}
	}
	return false
}

// sidePrefix is the prefix of user's keys in a side space of shard.
func sidePrefix(shard uint32, space byte, user string) []byte {
	k := append(shardPrefix(shard), space)
	k = binary.AppendUvarint(k, uint64(len(user)))
	return append(k, user...)
}

// SideKey is the key of one side record.
func SideKey(shard uint32, space byte, user, key string) []byte {
	return append(sidePrefix(shard, space, user), key...)
}

// applyUserTxn writes the transaction if the revision matches; on a mismatch it writes nothing and reports
// Conflict. The revision check and every write are in the same batch, so the check is atomic.
func applyUserTxn(b *pebble.Batch, shard uint32, p UserTxnPayload, ch *changes) (ApplyResult, error) {
	rev, err := readRev(b, shard, p.UserID)
	if err != nil {
		return ApplyResult{}, err
	}
	if rev != p.ExpectRev {
		return ApplyResult{Conflict: true, Rev: rev}, nil
	}
	if _, err := applyPut(b, shard, p.Puts, nil, ch); err != nil {
		return ApplyResult{}, err
	}
	res, err := applyDelete(b, shard, DeletePayload{UserID: p.UserID, IDs: p.Deletes}, ch)
	if err != nil {
		return ApplyResult{}, err
	}
	for _, kv := range p.Side {
		k := SideKey(shard, kv.Space, p.UserID, kv.Key)
		if kv.Value == nil {
			err = b.Delete(k, nil)
		} else {
			err = b.Set(k, kv.Value, nil)
		}
		if err != nil {
			return ApplyResult{}, err
		}
	}
	res.Rev = rev + 1
	return res, b.Set(SideKey(shard, spaceUserRev, p.UserID, ""), binary.BigEndian.AppendUint64(nil, rev+1), nil)
}

// readRev reads user's revision through the batch (so earlier commands of the same batch count).
func readRev(r pebble.Reader, shard uint32, user string) (uint64, error) {
	v, closer, err := r.Get(SideKey(shard, spaceUserRev, user, ""))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, diskErr("read user revision", err)
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: user revision %x", ErrBadRecord, v)
	}
	return binary.BigEndian.Uint64(v), nil
}

// deleteUserSide removes every side record of user (forget-user reaches them too).
func deleteUserSide(b *pebble.Batch, shard uint32, user string) error {
	for _, s := range sideSpaces {
		p := sidePrefix(shard, s, user)
		if err := b.DeleteRange(p, prefixEnd(p), nil); err != nil {
			return err
		}
	}
	return nil
}
