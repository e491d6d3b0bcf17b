package storage

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/memcluster/memcluster/internal/formats"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/vector"
)

// RecordFormat is the encoding of a stored memory record; a record's first byte names it.
//   - RecordF32 (1): [1][uvarint n][n bytes of JSON without the embedding][uvarint dim][dim float32 LE].
//   - RecordHalf (2): [2][uvarint n][n bytes of JSON][uvarint dim][float32 LE scale][dim uint16 LE halves]: the
//     embedding as the vector index stores its rows (vector.EncodeHalf), half the bytes of RecordF32.
//   - RecordBinary (3): RecordHalf with the fields in binary instead of JSON (record_binary.go).
//
// The embedding is binary because it dominates the record and JSON floats are slow and large. Every build of
// this version reads all three; which one a proposer writes is its cluster's choice (cluster.Node.RecordFormat:
// the newest every member reads), and the state machine stores a put's records as its entry carries them, so
// replicas hold the same bytes whatever their build. What the state machine encodes itself (a user
// transaction's puts, new embeddings) stays RecordF32, which every build writes alike. The vector index keeps
// embeddings in half precision either way, so searches score the same rows from any format.
type RecordFormat byte

// Record formats.
const (
	RecordF32    RecordFormat = formats.RecordOldest
	RecordHalf   RecordFormat = 2
	RecordBinary RecordFormat = formats.Record
	// RecordNewest is the newest format this build reads and writes.
	RecordNewest = RecordBinary
)

// EncodeMemory encodes m for storage and for commands in RecordF32.
func EncodeMemory(m *memory.Memory) ([]byte, error) { return EncodeMemoryAs(m, RecordF32) }

// EncodeMemoryAs encodes m in format f (RecordF32 when f is not a known format). A memory RecordBinary would
// not read back as its JSON does is written in RecordHalf (record_binary.go).
func EncodeMemoryAs(m *memory.Memory, f RecordFormat) ([]byte, error) {
	switch {
	case f == RecordBinary && binaryFits(m):
		return encodeBinary(m), nil
	case f == RecordBinary:
		f = RecordHalf
	case f != RecordHalf:
		f = RecordF32
	}
	emb := m.Embedding
	c := *m
	c.Embedding = nil
	js, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("encode memory %s: %w", m.ID, err)
	}
	buf := make([]byte, 0, 1+binary.MaxVarintLen64*2+len(js)+4+4*len(emb))
	buf = append(buf, byte(f))
	buf = binary.AppendUvarint(buf, uint64(len(js)))
	buf = append(buf, js...)
	if f == RecordF32 {
		buf = binary.AppendUvarint(buf, uint64(len(emb)))
		for _, x := range emb {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
		}
		return buf, nil
	}
	return appendHalfEmbedding(buf, emb), nil
}

// appendHalfEmbedding appends emb as RecordHalf and RecordBinary hold it: [uvarint dim], and when dim > 0 the
// scale and the halves.
func appendHalfEmbedding(buf []byte, emb []float32) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(emb)))
	if len(emb) == 0 {
		return buf
	}
	half := make([]uint16, len(emb))
	buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(vector.EncodeHalf(half, emb)))
	for _, h := range half {
		buf = binary.LittleEndian.AppendUint16(buf, h)
	}
	return buf
}

// DecodeMemory decodes a record written by EncodeMemory or EncodeMemoryAs. The JSON of RecordF32 and RecordHalf
// is read by go-json-experiment's v1 package, encoding/json's semantics on the v2 decoder (what encoding/json
// becomes with GOEXPERIMENT=jsonv2): 1.7× faster per record with 3 allocations instead of 14, and repeated
// short strings (user, type, tags, model) shared between records. Every restart decodes every record, and every
// replica decodes every put it applies; FuzzRecordJSONMatchesEncodingJSON holds it to encoding/json.
func DecodeMemory(b []byte) (memory.Memory, error) { return decodeMemory(b, true) }

// DecodeMemoryWithoutEmbedding is DecodeMemory for a reader that has no use for the embedding (a search's
// answers): its length is checked, its components are neither read nor checked, and Embedding is nil.
func DecodeMemoryWithoutEmbedding(b []byte) (memory.Memory, error) { return decodeMemory(b, false) }

func decodeMemory(b []byte, withEmbedding bool) (memory.Memory, error) {
	var m memory.Memory
	if len(b) == 0 || b[0] < byte(RecordF32) || b[0] > byte(RecordNewest) {
		return m, fmt.Errorf("%w: unknown version", ErrBadRecord)
	}
	f := RecordFormat(b[0])
	b = b[1:]
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return m, fmt.Errorf("%w: fields length", ErrBadRecord)
	}
	fields := b[w : w+int(n)]
	if f == RecordBinary {
		if err := decodeBinaryFields(fields, &m); err != nil {
			return memory.Memory{}, err
		}
	} else if err := jsonv1.Unmarshal(fields, &m); err != nil {
		return m, fmt.Errorf("%w: %v", ErrBadRecord, err)
	}
	b = b[w+int(n):]
	dim, w := binary.Uvarint(b)
	if w <= 0 || dim > uint64(len(b)) {
		return m, fmt.Errorf("%w: embedding length", ErrBadRecord)
	}
	b = b[w:]
	if f == RecordF32 {
		if uint64(len(b)) != 4*dim {
			return m, fmt.Errorf("%w: embedding length", ErrBadRecord)
		}
		if dim > 0 && withEmbedding {
			m.Embedding = make([]float32, dim)
			for i := range m.Embedding {
				m.Embedding[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			}
		}
		return m, nil
	}
	if dim == 0 {
		if len(b) != 0 {
			return m, fmt.Errorf("%w: embedding length", ErrBadRecord)
		}
		return m, nil
	}
	if uint64(len(b)) != 4+2*dim {
		return m, fmt.Errorf("%w: embedding length", ErrBadRecord)
	}
	if !withEmbedding {
		return m, nil
	}
	scale := math.Float32frombits(binary.LittleEndian.Uint32(b))
	half := make([]uint16, dim)
	for i := range half {
		half[i] = binary.LittleEndian.Uint16(b[4+2*i:])
	}
	m.Embedding = make([]float32, dim)
	if !vector.DecodeHalf(m.Embedding, half, scale) {
		return memory.Memory{}, fmt.Errorf("%w: embedding out of range", ErrBadRecord)
	}
	return m, nil
}
