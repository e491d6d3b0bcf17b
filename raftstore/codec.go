package raftstore

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// formatV1 is the first byte of every encoded entry. Any change to the
// layout below gets a new version so old binaries fail loudly on new data
// instead of misreading it.
//
// v1 layout after the version byte (varints are encoding/binary's):
//
//	uvarint Index, uvarint Term, byte Type,
//	uvarint len(Data), Data, uvarint len(Extensions), Extensions,
//	varint AppendedAt seconds (Unix), uvarint AppendedAt nanoseconds
//
// AppendedAt is stored as Unix seconds+nanos rather than UnixNano because
// the zero time.Time (raft leaves it zero on some paths) overflows int64
// nanoseconds but round-trips through seconds.
const formatV1 byte = 1

func appendLog(dst []byte, l *raft.Log) []byte {
	dst = append(dst, formatV1)
	dst = binary.AppendUvarint(dst, l.Index)
	dst = binary.AppendUvarint(dst, l.Term)
	dst = append(dst, byte(l.Type))
	dst = binary.AppendUvarint(dst, uint64(len(l.Data)))
	dst = append(dst, l.Data...)
	dst = binary.AppendUvarint(dst, uint64(len(l.Extensions)))
	dst = append(dst, l.Extensions...)
	dst = binary.AppendVarint(dst, l.AppendedAt.Unix())
	dst = binary.AppendUvarint(dst, uint64(l.AppendedAt.Nanosecond()))
	return dst
}

// encodedSize is the exact length of appendLog's output: StoreLogs has Pebble's batch reserve it and encodes the
// entry in place.
func encodedSize(l *raft.Log) int {
	return 1 + uvarintLen(l.Index) + uvarintLen(l.Term) + 1 +
		uvarintLen(uint64(len(l.Data))) + len(l.Data) + uvarintLen(uint64(len(l.Extensions))) + len(l.Extensions) +
		varintLen(l.AppendedAt.Unix()) + uvarintLen(uint64(l.AppendedAt.Nanosecond()))
}

// uvarintLen is the length of binary.AppendUvarint's encoding of x.
func uvarintLen(x uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], x)
}

// varintLen is the length of binary.AppendVarint's encoding of x.
func varintLen(x int64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutVarint(b[:], x)
}

// decodeLog decodes b into l. b belongs to Pebble and is only valid until
// the Get's closer is closed, so Data and Extensions are copied.
func decodeLog(b []byte, l *raft.Log) error {
	if len(b) == 0 {
		return fmt.Errorf("empty value: %w", ErrCorrupt)
	}
	if b[0] != formatV1 {
		return fmt.Errorf("version %d: %w", b[0], ErrUnknownFormat)
	}
	d := decoder{b: b[1:]}
	index := d.uvarint()
	term := d.uvarint()
	typ := d.byte()
	data := d.bytes()
	ext := d.bytes()
	sec := d.varint()
	nsec := d.uvarint()
	if d.bad || len(d.b) != 0 || nsec >= uint64(time.Second) {
		return fmt.Errorf("malformed v1 entry: %w", ErrCorrupt)
	}
	*l = raft.Log{Index: index, Term: term, Type: raft.LogType(typ), Data: data, Extensions: ext}
	if sec != zeroTimeUnix || nsec != 0 {
		l.AppendedAt = time.Unix(sec, int64(nsec))
	}
	return nil
}

// zeroTimeUnix is time.Time{}.Unix() (checked by a test): decoding it
// yields the zero Time itself, so a zero AppendedAt stays IsZero and ==.
const zeroTimeUnix int64 = -62135596800

type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.bad = true
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

// bytes returns a copy of a length-prefixed field; nil when empty, as raft
// itself leaves unused fields nil.
func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.b)) {
		d.bad = true
		return nil
	}
	if n == 0 {
		return nil
	}
	v := make([]byte, n)
	copy(v, d.b[:n])
	d.b = d.b[n:]
	return v
}
