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
//
// The embedding is binary because it dominates the record and JSON floats are slow and large. Every build of
// this version reads both; which one a proposer writes is its cluster's choice (cluster.Node.RecordFormat: half
// once every member reads it), and the state machine stores a put's records as its entry carries them, so
// replicas hold the same bytes whatever their build. What the state machine encodes itself (a user
// transaction's puts, new embeddings) stays RecordF32, which every build writes alike. The vector index keeps
// embeddings in half precision either way, so searches score the same rows from either format.
type RecordFormat byte

// Record formats.
const (
	RecordF32  RecordFormat = formats.RecordOldest
	RecordHalf RecordFormat = formats.Record
)

// EncodeMemory encodes m for storage and for commands in RecordF32.
func EncodeMemory(m *memory.Memory) ([]byte, error) { return EncodeMemoryAs(m, RecordF32) }

// EncodeMemoryAs encodes m in format f (RecordF32 when f is not a known format).
func EncodeMemoryAs(m *memory.Memory, f RecordFormat) ([]byte, error) {
	emb := m.Embedding
	c := *m
	c.Embedding = nil
	js, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("encode memory %s: %w", m.ID, err)
	}
	if f != RecordHalf {
		f = RecordF32
	}
	buf := make([]byte, 0, 1+binary.MaxVarintLen64*2+len(js)+4+4*len(emb))
	buf = append(buf, byte(f))
	buf = binary.AppendUvarint(buf, uint64(len(js)))
	buf = append(buf, js...)
	buf = binary.AppendUvarint(buf, uint64(len(emb)))
	if f == RecordF32 {
		for _, x := range emb {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
		}
		return buf, nil
	}
	if len(emb) == 0 {
		return buf, nil
	}
	half := make([]uint16, len(emb))
	buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(vector.EncodeHalf(half, emb)))
	for _, h := range half {
		buf = binary.LittleEndian.AppendUint16(buf, h)
	}
	return buf, nil
}

// DecodeMemory decodes a record written by EncodeMemory. Its JSON is read by go-json-experiment's v1 package,
// encoding/json's semantics on the v2 decoder (what encoding/json becomes with GOEXPERIMENT=jsonv2): 1.7× faster
// per record with 3 allocations instead of 14, and repeated short strings (user, type, tags, model) shared
// between records. Every restart decodes every record, and every replica decodes every put it applies;
// FuzzRecordJSONMatchesEncodingJSON holds it to encoding/json.
func DecodeMemory(b []byte) (memory.Memory, error) {
	var m memory.Memory
	if len(b) == 0 || (b[0] != byte(RecordF32) && b[0] != byte(RecordHalf)) {
		return m, fmt.Errorf("%w: unknown version", ErrBadRecord)
	}
	f := RecordFormat(b[0])
	b = b[1:]
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return m, fmt.Errorf("%w: json length", ErrBadRecord)
	}
	if err := jsonv1.Unmarshal(b[w:w+int(n)], &m); err != nil {
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
		if dim > 0 {
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
