package tiering

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"

	"github.com/memcluster/memcluster/internal/formats"
	"github.com/memcluster/memcluster/memory"
)

// Cold segment, format version 1. Immutable; one user, one class and type, one signal (perceptual only),
// one time range:
//
//	"MCSG" [version u8 = 1] [uvarint header length] [header]
//	[zstd frame: the columnar payload of items.go] [xxhash64 LE of every byte before it]
//
//	header: user, class, type, signal (uvarint-length strings), from, to (varint seconds + uvarint nanos,
//	UTC), item count (uvarint), payload length before compression (uvarint)
//
// The trailing checksum covers header and payload, so a torn upload or a flipped bit is ErrCorrupt before
// anything is inflated; the header's counts are checked against DecodeLimits before decompression, and the
// decompressor may not produce a byte more than the header announced.
const (
	segmentMagic   = "MCSG"
	segmentVersion = formats.Segment
	checksumLen    = 8
	maxHeaderLen   = 4 << 10
)

// SegmentMeta describes a segment: whose items, which partition, which time range.
type SegmentMeta struct {
	UserID string      `json:"user_id"`
	Class  Class       `json:"class"`
	Type   memory.Type `json:"type"`
	Signal string      `json:"signal,omitempty"` // perceptual class only
	// From and To bound the items' OccurredAt, inclusive.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Count and Checksum are filled by Decode and ReadHeader; Encode ignores them.
	Count    int    `json:"count,omitempty"`
	Checksum uint64 `json:"checksum,omitempty"`
}

func (m SegmentMeta) validate() error {
	switch {
	case m.UserID == "":
		return fmt.Errorf("%w: segment without a user", ErrInvalid)
	case !validPair(m.Class, m.Type):
		return fmt.Errorf("%w: class %q cannot hold type %q", ErrInvalid, m.Class, m.Type)
	case m.Signal != "" && m.Class != ClassPerceptual:
		return fmt.Errorf("%w: signal %q on a %s segment", ErrInvalid, m.Signal, m.Class)
	case !timeInRange(m.From) || !timeInRange(m.To) || m.To.Before(m.From):
		return fmt.Errorf("%w: time range %v .. %v", ErrInvalid, m.From, m.To)
	}
	return nil
}

// DecodeLimits bound what a segment may decode to, so corrupt or hostile bytes fail with ErrTooLarge
// instead of exhausting memory. Zero fields take the defaults.
type DecodeLimits struct {
	// MaxItems bounds the item count; default 10000 (the policy groups at most 500 by default).
	MaxItems int
	// MaxRawBytes bounds the payload after decompression; default 256 MiB (500 items of the largest size
	// memory.DefaultLimits allow are about 32 MiB).
	MaxRawBytes int64
}

// DefaultDecodeLimits are the limits Decode uses and Encode respects.
var DefaultDecodeLimits = DecodeLimits{MaxItems: 10000, MaxRawBytes: 256 << 20}

func (l DecodeLimits) withDefaults() DecodeLimits {
	if l.MaxItems <= 0 {
		l.MaxItems = DefaultDecodeLimits.MaxItems
	}
	if l.MaxRawBytes <= 0 {
		l.MaxRawBytes = DefaultDecodeLimits.MaxRawBytes
	}
	return l
}

// maxWindow bounds the zstd window a segment may ask for (the decoder allocates it); the encoder uses 8 MiB.
const maxWindow = 8 << 20

// The codec is stateless and safe for concurrent use, so one encoder and one decoder serve the process.
var (
	zEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
		return zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression),
			zstd.WithWindowSize(maxWindow), zstd.WithEncoderCRC(false), zstd.WithEncoderConcurrency(1))
	})
	zDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
		return zstd.NewReader(nil, zstd.WithDecodeAllCapLimit(true), zstd.WithDecoderMaxWindow(maxWindow),
			zstd.WithDecoderConcurrency(2))
	})
)

// Encode writes ms as a segment described by meta. Every item must belong to meta's user, class and type
// (and signal), occur within [From, To], have a unique id, and carry values a hot record can hold.
// Embeddings are dropped: a rehydrated item is re-embedded with the model current at that time.
func Encode(ms []memory.Memory, meta SegmentMeta) ([]byte, error) {
	if err := checkItems(ms, meta); err != nil {
		return nil, err
	}
	raw := encodeItems(ms)
	if int64(len(raw)) > DefaultDecodeLimits.MaxRawBytes {
		return nil, fmt.Errorf("%w: %d items encode to %d bytes", ErrTooLarge, len(ms), len(raw))
	}
	zenc, err := zEncoder()
	if err != nil {
		return nil, fmt.Errorf("segment encoder: %w", err)
	}
	meta.Count = len(ms)
	out := []byte(segmentMagic)
	out = append(out, segmentVersion)
	hdr := encodeHeader(meta, len(raw))
	out = binary.AppendUvarint(out, uint64(len(hdr)))
	out = append(out, hdr...)
	out = zenc.EncodeAll(raw, out)
	return binary.LittleEndian.AppendUint64(out, xxhash.Sum64(out)), nil
}

func checkItems(ms []memory.Memory, meta SegmentMeta) error {
	if err := meta.validate(); err != nil {
		return err
	}
	if len(ms) == 0 || len(ms) > DefaultDecodeLimits.MaxItems {
		return fmt.Errorf("%w: %d items (want 1 to %d)", ErrInvalid, len(ms), DefaultDecodeLimits.MaxItems)
	}
	seen := make(map[string]bool, len(ms))
	for i := range ms {
		if err := checkItem(&ms[i], meta); err != nil {
			return fmt.Errorf("%w: item %q: %v", ErrInvalid, ms[i].ID, err)
		}
		if seen[ms[i].ID] {
			return fmt.Errorf("%w: item %q appears twice", ErrInvalid, ms[i].ID)
		}
		seen[ms[i].ID] = true
	}
	return nil
}

func checkItem(m *memory.Memory, meta SegmentMeta) error {
	c, ok := ClassOf(m)
	switch {
	case m.UserID != meta.UserID:
		return fmt.Errorf("user %q in a segment of %q", m.UserID, meta.UserID)
	case m.Type != meta.Type || !ok || c != meta.Class:
		return fmt.Errorf("type %q (class %q) in a %s/%s segment", m.Type, c, meta.Class, meta.Type)
	case meta.Class == ClassPerceptual && m.Metadata[MetaSignal] != meta.Signal:
		return fmt.Errorf("signal %q in a segment of signal %q", m.Metadata[MetaSignal], meta.Signal)
	case m.OccurredAt.Before(meta.From) || m.OccurredAt.After(meta.To):
		return fmt.Errorf("occurred_at %v outside %v .. %v", m.OccurredAt, meta.From, meta.To)
	case !timeInRange(m.CreatedAt):
		return fmt.Errorf("created_at %v out of range", m.CreatedAt)
	case !validImportance(m.Importance):
		return fmt.Errorf("importance %v out of range", m.Importance)
	}
	return nil
}

func encodeHeader(meta SegmentMeta, rawLen int) []byte {
	e := &enc{}
	e.str(meta.UserID)
	e.str(string(meta.Class))
	e.str(string(meta.Type))
	e.str(meta.Signal)
	e.time(meta.From, 0)
	e.time(meta.To, 0)
	e.uvarint(uint64(meta.Count))
	e.uvarint(uint64(rawLen))
	return e.b
}

// Decode reads a segment with DefaultDecodeLimits. Items come back in the order they were encoded, with
// times in UTC and no embedding.
func Decode(b []byte) (SegmentMeta, []memory.Memory, error) {
	return DecodeWithLimits(b, DefaultDecodeLimits)
}

// DecodeWithLimits reads a segment, refusing one whose header claims more than lim allows.
func DecodeWithLimits(b []byte, lim DecodeLimits) (SegmentMeta, []memory.Memory, error) {
	lim = lim.withDefaults()
	meta, rawLen, body, err := readHeader(b)
	if err != nil {
		return SegmentMeta{}, nil, err
	}
	if meta.Count > lim.MaxItems || rawLen > uint64(lim.MaxRawBytes) {
		return SegmentMeta{}, nil, fmt.Errorf("%w: %d items, %d bytes (limits %d, %d)",
			ErrTooLarge, meta.Count, rawLen, lim.MaxItems, lim.MaxRawBytes)
	}
	zdec, err := zDecoder()
	if err != nil {
		return SegmentMeta{}, nil, fmt.Errorf("segment decoder: %w", err)
	}
	raw, err := zdec.DecodeAll(body, make([]byte, 0, rawLen))
	if err != nil {
		return SegmentMeta{}, nil, fmt.Errorf("%w: decompress: %v", ErrCorrupt, err)
	}
	if uint64(len(raw)) != rawLen {
		return SegmentMeta{}, nil, fmt.Errorf("%w: payload is %d bytes, header says %d", ErrCorrupt, len(raw), rawLen)
	}
	ms, err := decodeItems(raw, meta, meta.Count)
	if err != nil {
		return SegmentMeta{}, nil, err
	}
	// What Encode would refuse is not a segment it wrote; checking it here also means every segment Decode
	// accepts can be encoded again unchanged.
	if err := checkItems(ms, meta); err != nil {
		return SegmentMeta{}, nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return meta, ms, nil
}

// ReadHeader verifies a segment's checksum and returns its description without inflating the items.
func ReadHeader(b []byte) (SegmentMeta, error) {
	meta, _, _, err := readHeader(b)
	return meta, err
}

// readHeader checks magic, version and checksum, and returns the header, the announced payload length
// and the compressed payload.
func readHeader(b []byte) (SegmentMeta, uint64, []byte, error) {
	if len(b) < len(segmentMagic)+1 || !bytes.HasPrefix(b, []byte(segmentMagic)) {
		return SegmentMeta{}, 0, nil, fmt.Errorf("%w: not a segment (bad magic)", ErrCorrupt)
	}
	if v := b[len(segmentMagic)]; v != segmentVersion {
		return SegmentMeta{}, 0, nil, fmt.Errorf("%w: version %d (this binary reads %d)", ErrVersion, v, segmentVersion)
	}
	if len(b) < len(segmentMagic)+1+1+checksumLen {
		return SegmentMeta{}, 0, nil, fmt.Errorf("%w: truncated (%d bytes)", ErrCorrupt, len(b))
	}
	body, sum := b[:len(b)-checksumLen], binary.LittleEndian.Uint64(b[len(b)-checksumLen:])
	if got := xxhash.Sum64(body); got != sum {
		return SegmentMeta{}, 0, nil, fmt.Errorf("%w: checksum %016x, stored %016x (torn or damaged)", ErrCorrupt, got, sum)
	}
	d := &dec{b: body[len(segmentMagic)+1:]}
	n := d.uvarint("header length")
	if d.err == nil && (n > maxHeaderLen || n > uint64(len(d.b))) {
		d.fail("header length %d", n)
	}
	if d.err != nil {
		return SegmentMeta{}, 0, nil, d.err
	}
	meta, rawLen, err := decodeHeader(d.b[:n])
	if err != nil {
		return SegmentMeta{}, 0, nil, err
	}
	meta.Checksum = sum
	return meta, rawLen, d.b[n:], nil
}

func decodeHeader(b []byte) (SegmentMeta, uint64, error) {
	d := &dec{b: b}
	var m SegmentMeta
	m.UserID = d.str("user")
	m.Class = Class(d.str("class"))
	m.Type = memory.Type(d.str("type"))
	m.Signal = d.str("signal")
	m.From, _ = d.time("from", 0)
	m.To, _ = d.time("to", 0)
	count := d.uvarint("count")
	rawLen := d.uvarint("payload length")
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes after the header", len(d.b))
	}
	if d.err != nil {
		return m, 0, d.err
	}
	if err := m.validate(); err != nil {
		return m, 0, fmt.Errorf("%w: header: %v", ErrCorrupt, err)
	}
	if count == 0 || count > 1<<31 {
		return m, 0, fmt.Errorf("%w: header: item count %d", ErrCorrupt, count)
	}
	m.Count = int(count)
	return m, rawLen, nil
}

// Checksum returns the checksum of a segment Encode produced (its last 8 bytes); an archive entry records it
// so that a rehydration can tell the segment it fetched is the one that was archived.
func Checksum(seg []byte) uint64 {
	if len(seg) < checksumLen {
		return 0
	}
	return binary.LittleEndian.Uint64(seg[len(seg)-checksumLen:])
}
