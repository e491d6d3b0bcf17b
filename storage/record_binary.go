package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/memcluster/memcluster/memory"
)

// RecordBinary (3) holds a memory's fields without JSON: [3][uvarint n][n bytes of fields][the embedding as in
// RecordHalf]. The fields, in this order: the strings id, user_id, agent_id, run_id, type, text, embed_model and
// scope, each [uvarint length][bytes]; occurred_at and created_at, each [zigzag varint Unix seconds][uvarint
// nanoseconds] in UTC; importance as 8 bytes of float64 LE; tags and entities, each [uvarint count] strings;
// metadata as [uvarint count] key and value strings, keys strictly increasing.
//
// Why: a search answer decodes every record it returns, and JSON's text unquoting was a third of a search of
// long memories; every replica decodes every put it applies, and a restart every record. A memory that JSON
// would change or refuse (a string that is not UTF-8, which encoding/json coerces; a time not in UTC, whose
// offset JSON keeps; a year JSON cannot write; a NaN importance) is written as RecordHalf instead, so that the
// format a proposer writes never changes what a memory reads back as or which memories a put refuses.

// scalarStrings are m's single strings in the order the format writes them (decodeBinaryFields reads them so).
func scalarStrings(m *memory.Memory) [8]string {
	return [...]string{m.ID, m.UserID, m.AgentID, m.RunID, string(m.Type), m.Text, m.EmbedModel, string(m.Scope)}
}

// binaryFits reports whether m reads back from RecordBinary exactly as from its JSON.
func binaryFits(m *memory.Memory) bool {
	for _, s := range scalarStrings(m) {
		if !utf8.ValidString(s) {
			return false
		}
	}
	for _, l := range [...][]string{m.Tags, m.Entities} {
		for _, s := range l {
			if !utf8.ValidString(s) {
				return false
			}
		}
	}
	for k, v := range m.Metadata {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return false
		}
	}
	return jsonTimeInUTC(m.OccurredAt) && jsonTimeInUTC(m.CreatedAt) &&
		!math.IsNaN(m.Importance) && !math.IsInf(m.Importance, 0)
}

// jsonTimeInUTC: t's JSON names no offset (it reads back in UTC) and its year is one JSON writes.
func jsonTimeInUTC(t time.Time) bool {
	_, off := t.Zone()
	return off == 0 && t.Year() >= 0 && t.Year() <= 9999
}

func encodeBinary(m *memory.Memory) []byte {
	n := 16*5 + 8
	for _, s := range scalarStrings(m) {
		n += len(s) + binary.MaxVarintLen32
	}
	for _, s := range m.Tags {
		n += len(s) + binary.MaxVarintLen32
	}
	for _, s := range m.Entities {
		n += len(s) + binary.MaxVarintLen32
	}
	for k, v := range m.Metadata {
		n += len(k) + len(v) + 2*binary.MaxVarintLen32
	}
	f := make([]byte, 0, n)
	for _, s := range scalarStrings(m) {
		f = appendString(f, s)
	}
	f = appendTime(f, m.OccurredAt)
	f = appendTime(f, m.CreatedAt)
	f = binary.LittleEndian.AppendUint64(f, math.Float64bits(m.Importance))
	f = appendStrings(f, m.Tags)
	f = appendStrings(f, m.Entities)
	keys := make([]string, 0, len(m.Metadata))
	for k := range m.Metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	f = binary.AppendUvarint(f, uint64(len(keys)))
	for _, k := range keys {
		f = appendString(appendString(f, k), m.Metadata[k])
	}
	buf := make([]byte, 0, 1+binary.MaxVarintLen64*2+len(f)+4+2*len(m.Embedding))
	buf = append(buf, byte(RecordBinary))
	buf = binary.AppendUvarint(buf, uint64(len(f)))
	buf = append(buf, f...)
	return appendHalfEmbedding(buf, m.Embedding)
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// stringLen is the length of appendString's output.
func stringLen(s string) int { return uvarintLen(uint64(len(s))) + len(s) }

// uvarintLen is the length of binary.AppendUvarint's output.
func uvarintLen(x uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], x)
}

func appendStrings(b []byte, l []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(l)))
	for _, s := range l {
		b = appendString(b, s)
	}
	return b
}

func appendTime(b []byte, t time.Time) []byte {
	return binary.AppendUvarint(binary.AppendVarint(b, t.Unix()), uint64(t.Nanosecond()))
}

// fieldReader reads the fields of a RecordBinary record; the first malformed one sets err and every later read
// returns zero values.
type fieldReader struct {
	b   []byte
	err error
}

func (r *fieldReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrBadRecord, what)
		r.b = nil
	}
}

func (r *fieldReader) uvarint(what string) uint64 {
	v, w := binary.Uvarint(r.b)
	if w <= 0 {
		r.fail(what)
		return 0
	}
	r.b = r.b[w:]
	return v
}

func (r *fieldReader) byte(what string) byte {
	if len(r.b) == 0 {
		r.fail(what)
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// raw is a length-prefixed byte string, copied.
func (r *fieldReader) raw(what string) []byte { return bytes.Clone(r.field(what)) }

func (r *fieldReader) str(what string) string { return string(r.field(what)) }

// field is a length-prefixed byte string, in place.
func (r *fieldReader) field(what string) []byte {
	n := r.uvarint(what)
	if n > uint64(len(r.b)) {
		r.fail(what)
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *fieldReader) strs(what string) []string {
	n := r.uvarint(what)
	if n == 0 || n > uint64(len(r.b)) { // each string takes a byte at least
		if n != 0 {
			r.fail(what)
		}
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str(what)
	}
	return out
}

func (r *fieldReader) time(what string) time.Time {
	sec, w := binary.Varint(r.b)
	if w <= 0 {
		r.fail(what)
		return time.Time{}
	}
	r.b = r.b[w:]
	ns := r.uvarint(what)
	if ns >= 1e9 {
		r.fail(what)
		return time.Time{}
	}
	return time.Unix(sec, int64(ns)).UTC()
}

func (r *fieldReader) float(what string) float64 {
	if len(r.b) < 8 {
		r.fail(what)
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

// decodeBinaryFields decodes the fields of a RecordBinary record into m.
func decodeBinaryFields(b []byte, m *memory.Memory) error {
	r := fieldReader{b: b}
	m.ID, m.UserID, m.AgentID, m.RunID = r.str("id"), r.str("user_id"), r.str("agent_id"), r.str("run_id")
	m.Type, m.Text, m.EmbedModel = memory.Type(r.str("type")), r.str("text"), r.str("embed_model")
	m.Scope = memory.Scope(r.str("scope"))
	m.OccurredAt, m.CreatedAt = r.time("occurred_at"), r.time("created_at")
	m.Importance = r.float("importance")
	m.Tags, m.Entities = r.strs("tags"), r.strs("entities")
	if n := r.uvarint("metadata"); n > 0 && n <= uint64(len(r.b)) {
		m.Metadata = make(map[string]string, n)
		prev := ""
		for i := range n {
			k, v := r.str("metadata"), r.str("metadata")
			if r.err == nil && i > 0 && k <= prev {
				r.fail("metadata keys out of order")
			}
			m.Metadata[k], prev = v, k
		}
	} else if n > 0 {
		r.fail("metadata")
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("bytes after the fields")
	}
	// What the encoder would not write in this format (a NaN importance, a year JSON cannot write, a string not
	// UTF-8) is refused: such a record could not be encoded again (a re-embedding re-encodes what it reads),
	// and formats 1 and 2 could never hold it.
	if r.err == nil && !binaryFits(m) {
		r.fail("a field the format does not hold")
	}
	return r.err
}
