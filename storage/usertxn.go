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
	// Puts are memory records, carried in the record format after the header.
	Puts []memory.Memory `json:"-"`
}

// EncodeUserTxn encodes a user transaction: uvarint header length, header, then the puts as in CmdPut (records
// in RecordF32). The header is JSON in CommandJSON (this function's) and binary fields in CommandBinary
// (appendTxnHeader).
func EncodeUserTxn(p UserTxnPayload) ([]byte, error) { return Encoder{}.UserTxn(p) }

// UserTxn encodes a user transaction.
func (e Encoder) UserTxn(p UserTxnPayload) ([]byte, error) { return e.userTxn(CmdUserTxn, p) }

func (e Encoder) userTxn(t CommandType, p UserTxnPayload) ([]byte, error) {
	recs, recBytes, err := e.records(p.Puts)
	if err != nil {
		return nil, err
	}
	var buf []byte
	if e.Commands < CommandBinary {
		hdr, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("encode user txn: %w", err)
		}
		buf = make([]byte, 0, 2+binary.MaxVarintLen64+len(hdr)+recBytes)
		buf = append(binary.AppendUvarint(append(buf, byte(CommandJSON), byte(t)), uint64(len(hdr))), hdr...)
	} else {
		if err := checkSideValues(p.Side); err != nil {
			return nil, fmt.Errorf("encode user txn: %w", err)
		}
		// One buffer of the command's size, the header written into it: a flush's header carries its session,
		// kilobytes that growing a buffer of its own, then copying it, would allocate several times over.
		n := txnHeaderLen(p)
		buf = make([]byte, 0, 2+binary.MaxVarintLen64+n+recBytes)
		buf = binary.AppendUvarint(append(buf, byte(CommandBinary), byte(t)), uint64(n))
		start := len(buf)
		if buf = appendTxnHeader(buf, p); len(buf)-start != n {
			return nil, fmt.Errorf("encode user txn: header of %d bytes, sized %d", len(buf)-start, n) // never
		}
	}
	return appendRecords(buf, recs), nil
}

// checkSideValues refuses a value that is not JSON, as json.Marshal does in the JSON header: nothing a replica
// stores is something a reader could not parse.
func checkSideValues(side []SideKV) error {
	for _, kv := range side {
		if len(kv.Value) > 0 && !json.Valid(kv.Value) {
			return fmt.Errorf("side %q key %q: value is not JSON", kv.Space, kv.Key)
		}
	}
	return nil
}

// appendTxnHeader appends p's header in binary fields: user id, expected revision, deleted ids, then each side
// write as space, key, and a present flag (0: delete) followed by the value. An empty value deletes, as the
// JSON header's omitted one does.
func appendTxnHeader(b []byte, p UserTxnPayload) []byte {
	b = appendString(b, p.UserID)
	b = binary.AppendUvarint(b, p.ExpectRev)
	b = appendStrings(b, p.Deletes)
	b = binary.AppendUvarint(b, uint64(len(p.Side)))
	for _, kv := range p.Side {
		b = appendString(append(b, kv.Space), kv.Key)
		if len(kv.Value) == 0 {
			b = append(b, 0)
			continue
		}
		b = binary.AppendUvarint(append(b, 1), uint64(len(kv.Value)))
		b = append(b, kv.Value...)
	}
	return b
}

// txnHeaderLen is the length of appendTxnHeader's output.
func txnHeaderLen(p UserTxnPayload) int {
	n := stringLen(p.UserID) + uvarintLen(p.ExpectRev) + uvarintLen(uint64(len(p.Deletes)))
	for _, d := range p.Deletes {
		n += stringLen(d)
	}
	n += uvarintLen(uint64(len(p.Side)))
	for _, kv := range p.Side {
		n += 1 + stringLen(kv.Key) + 1
		if len(kv.Value) > 0 {
			n += uvarintLen(uint64(len(kv.Value))) + len(kv.Value)
		}
	}
	return n
}

func decodeTxnHeader(b []byte) (UserTxnPayload, error) {
	r := fieldReader{b: b}
	out := UserTxnPayload{UserID: r.str("user_id"), ExpectRev: r.uvarint("expect_rev"), Deletes: r.strs("deletes")}
	n := r.uvarint("side")
	if n > uint64(len(r.b))/3 { // a write takes three bytes at least
		r.fail("side count")
	}
	if n > 0 && r.err == nil {
		out.Side = make([]SideKV, 0, n)
	}
	for i := uint64(0); i < n && r.err == nil; i++ {
		kv := SideKV{Space: r.byte("side space"), Key: r.str("side key")}
		switch r.byte("side value flag") {
		case 0:
		case 1: // a value, never empty: an empty one is written as a delete
			if kv.Value = r.raw("side value"); len(kv.Value) == 0 {
				r.fail("empty side value")
			}
		default:
			r.fail("side value flag")
		}
		out.Side = append(out.Side, kv)
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("bytes after the header")
	}
	return out, r.err
}

func decodeUserTxn(p []byte, f CommandFormat) (UserTxnPayload, error) {
	var out UserTxnPayload
	n, w := binary.Uvarint(p)
	if w <= 0 || n > uint64(len(p)-w) {
		return out, errors.New("user txn header length")
	}
	hdr := p[w : w+int(n)]
	var err error
	if f == CommandJSON {
		err = strictJSON(hdr, &out)
	} else {
		out, err = decodeTxnHeader(hdr)
	}
	if err != nil {
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
