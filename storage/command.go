package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/memcluster/memcluster/internal/formats"
	"github.com/memcluster/memcluster/memory"
)

// Command encoding: [format version][type][payload]. Everything non-deterministic (ids, clocks, embeddings) is
// decided by the proposer and carried in the payload; replicas only decode and write.

// CommandFormat is the format version of a log entry. Only user transactions differ between the two: format 2
// carries their header in binary fields, which replicas decode without scanning JSON (a flush's header holds
// the session, facts and history values). A build reads both; a proposer writes format 2 once every member of
// its cluster reads it (cluster: NodeInfo.Commands), as it does for record formats.
type CommandFormat byte

// Command formats.
const (
	CommandJSON   CommandFormat = 1
	CommandBinary CommandFormat = 2
	// CommandNewest is the newest format this build reads and writes.
	CommandNewest CommandFormat = formats.Command
)

// commandVersion is the format byte of the commands that are the same in every format: the oldest, which every
// build reads.
const commandVersion = byte(CommandJSON)

// CommandType names a state change.
type CommandType uint8

// Command types of format version 1. Never renumber; add new types at the end.
const (
	CmdPut        CommandType = 1 // payload: uvarint count, then count × (uvarint len, record)
	CmdDelete     CommandType = 2 // payload: JSON DeletePayload
	CmdDeleteUser CommandType = 3 // payload: JSON DeleteUserPayload
	// CmdSetEmbeddings replaces the embeddings of existing memories (after the embedding model changed);
	// a memory deleted meanwhile stays deleted. Payload: JSON SetEmbeddingsPayload.
	CmdSetEmbeddings CommandType = 4
	// CmdUserTxn changes one user's memories and side state (sessions, facts, history, samples) atomically,
	// guarded by the user's revision. Payload: see EncodeUserTxn.
	CmdUserTxn CommandType = 5
	// CmdSplit hands the upper part of the shard's hash range to a new shard: every record of the users in
	// it moves to the child's keyspace in the same batch (split.go). Payload: JSON SplitPayload.
	CmdSplit CommandType = 6
	// CmdPrune deletes the shard's request results made before a cutoff the proposer chose (prune.go); it
	// names no user. Payload: JSON PrunePayload.
	CmdPrune CommandType = 7
	// CmdUpdate is a user transaction whose puts replace memories that must still exist: if one was deleted
	// since the proposer read it, nothing is written and the result is a conflict (update.go). Payload: as
	// CmdUserTxn.
	CmdUpdate CommandType = 8

	// MaxCommandType is the highest command type this build applies. An older build halts a replica on an
	// entry of a later type, so a proposer of an automatic command checks its peers' (cluster: NodeReport).
	MaxCommandType = CmdUpdate
)

// Command is a decoded log entry.
type Command struct {
	Type CommandType
	Puts []memory.Memory
	// PutRecords are the encoded records of Puts as the entry carries them (EncodeMemory's bytes): apply
	// stores them as they are instead of encoding each memory again on every replica.
	PutRecords [][]byte
	Delete     DeletePayload
	DeleteUser DeleteUserPayload
	SetEmbed   SetEmbeddingsPayload
	UserTxn    UserTxnPayload
	Split      SplitPayload
	Prune      PrunePayload
}

// SetEmbeddingsPayload carries new embeddings, computed by the proposer.
type SetEmbeddingsPayload struct {
	Items []EmbeddingUpdate `json:"items"`
}

// EmbeddingUpdate is the new embedding of one memory.
type EmbeddingUpdate struct {
	UserID string    `json:"user_id"`
	ID     string    `json:"id"`
	Model  string    `json:"model"`
	Vector []float32 `json:"vector"`
}

// DeletePayload removes memories of one user. RequestID, chosen by the proposer, makes a retried proposal
// (after a leader change lost the first answer) report what the first application did instead of "nothing".
type DeletePayload struct {
	UserID    string   `json:"user_id"`
	IDs       []string `json:"ids"`
	RequestID string   `json:"request_id,omitempty"`
}

// DeleteUserPayload removes every memory of one user in the shard.
type DeleteUserPayload struct {
	UserID    string `json:"user_id"`
	RequestID string `json:"request_id,omitempty"`
}

// Encoder encodes the commands that carry memory records with the records in its format, and user transactions
// in its command format. The zero Encoder writes RecordF32 and CommandJSON, which every build reads; a proposer
// writes the newest formats every member of its cluster reads.
type Encoder struct {
	Records  RecordFormat
	Commands CommandFormat
}

// EncodePut encodes a put of one or more memories in RecordF32.
func EncodePut(ms []memory.Memory) ([]byte, error) { return Encoder{}.Put(ms) }

// Put encodes a put of one or more memories.
func (e Encoder) Put(ms []memory.Memory) ([]byte, error) {
	recs, n, err := e.records(ms)
	if err != nil {
		return nil, err
	}
	return appendRecords(append(make([]byte, 0, 2+n), commandVersion, byte(CmdPut)), recs), nil
}

// records encodes ms in the encoder's record format, and says how many bytes appendRecords will add for them.
func (e Encoder) records(ms []memory.Memory) (recs [][]byte, n int, err error) {
	recs = make([][]byte, len(ms))
	n = uvarintLen(uint64(len(ms)))
	for i := range ms {
		if recs[i], err = EncodeMemoryAs(&ms[i], e.Records); err != nil {
			return nil, 0, err
		}
		n += uvarintLen(uint64(len(recs[i]))) + len(recs[i])
	}
	return recs, n, nil
}

// appendRecords appends the records of a put: their count, then each with its length.
func appendRecords(b []byte, recs [][]byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(recs)))
	for _, rec := range recs {
		b = append(binary.AppendUvarint(b, uint64(len(rec))), rec...)
	}
	return b
}

// EncodeDelete encodes a delete.
func EncodeDelete(p DeletePayload) ([]byte, error) { return encodeJSON(CmdDelete, p) }

// EncodeSetEmbeddings encodes new embeddings for existing memories.
func EncodeSetEmbeddings(p SetEmbeddingsPayload) ([]byte, error) {
	return encodeJSON(CmdSetEmbeddings, p)
}

// EncodeDeleteUser encodes the removal of a user's memories.
func EncodeDeleteUser(p DeleteUserPayload) ([]byte, error) { return encodeJSON(CmdDeleteUser, p) }

func encodeJSON(t CommandType, v any) ([]byte, error) {
	js, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode command %d: %w", t, err)
	}
	return append([]byte{commandVersion, byte(t)}, js...), nil
}

// AddsIndexWork reports whether an encoded command may give the replicas' full-text indexes work: every
// command but a split, a prune and new embeddings (vectors only). One it cannot read counts as adding work.
func AddsIndexWork(cmd []byte) bool {
	if len(cmd) < 2 {
		return true
	}
	switch CommandType(cmd[1]) {
	case CmdSplit, CmdPrune, CmdSetEmbeddings:
		return false
	}
	return true
}

// DecodeCommand decodes a log entry's data. Any error wraps ErrUnknownCommand.
func DecodeCommand(b []byte) (Command, error) {
	var c Command
	if len(b) < 2 || b[0] < byte(CommandJSON) || b[0] > byte(CommandNewest) {
		return c, fmt.Errorf("%w: format version", ErrUnknownCommand)
	}
	c.Type = CommandType(b[1])
	p := b[2:]
	var err error
	switch c.Type {
	case CmdPut:
		c.Puts, c.PutRecords, err = decodePuts(p)
	case CmdDelete:
		err = strictJSON(p, &c.Delete)
	case CmdDeleteUser:
		err = strictJSON(p, &c.DeleteUser)
	case CmdSetEmbeddings:
		err = strictJSON(p, &c.SetEmbed)
	case CmdUserTxn, CmdUpdate:
		c.UserTxn, err = decodeUserTxn(p, CommandFormat(b[0]))
	case CmdSplit:
		if err = strictJSON(p, &c.Split); err == nil {
			err = c.Split.validate()
		}
	case CmdPrune:
		if err = strictJSON(p, &c.Prune); err == nil {
			err = c.Prune.validate()
		}
	default:
		return c, fmt.Errorf("%w: type %d", ErrUnknownCommand, c.Type)
	}
	if err != nil {
		return c, fmt.Errorf("%w: type %d: %v", ErrUnknownCommand, c.Type, err)
	}
	return c, nil
}

func decodePuts(p []byte) ([]memory.Memory, [][]byte, error) {
	n, w := binary.Uvarint(p)
	if w <= 0 || n > uint64(len(p)) {
		return nil, nil, errors.New("put count")
	}
	p = p[w:]
	out := make([]memory.Memory, 0, n)
	recs := make([][]byte, 0, n)
	for i := uint64(0); i < n; i++ {
		l, w := binary.Uvarint(p)
		if w <= 0 || uint64(len(p)-w) < l {
			return nil, nil, errors.New("put record length")
		}
		rec := p[w : w+int(l)]
		m, err := DecodeMemory(rec)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, m)
		recs = append(recs, rec)
		p = p[w+int(l):]
	}
	if len(p) != 0 {
		return nil, nil, errors.New("trailing bytes")
	}
	return out, recs, nil
}

func strictJSON(p []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(p))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// Users lists the users a command touches, one entry per item that names one (repeats included), so that a
// caller can check every one of them. CmdSplit and CmdPrune name none: a split is checked against the shard's
// range itself, and a prune touches only request results.
func (c Command) Users() []string {
	var out []string
	switch c.Type {
	case CmdPut:
		for _, m := range c.Puts {
			out = append(out, m.UserID)
		}
	case CmdDelete:
		out = append(out, c.Delete.UserID)
	case CmdDeleteUser:
		out = append(out, c.DeleteUser.UserID)
	case CmdSetEmbeddings:
		for _, it := range c.SetEmbed.Items {
			out = append(out, it.UserID)
		}
	case CmdUserTxn, CmdUpdate:
		out = append(out, c.UserTxn.UserID)
		for _, m := range c.UserTxn.Puts {
			out = append(out, m.UserID)
		}
	case CmdSplit, CmdPrune:
	}
	return out
}
