package tiering

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// Times in segments are whole seconds since the Unix epoch plus nanoseconds, in UTC. The range is the one a
// hot record can hold (its JSON encoding refuses years outside 0000-9999), so every stored time fits and a
// decoder can refuse anything else as corruption.
var (
	minSec = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	maxSec = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
)

func timeInRange(t time.Time) bool { s := t.Unix(); return s >= minSec && s <= maxSec }

// enc appends the primitive fields of the format.
type enc struct{ b []byte }

func (e *enc) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) str(s string)     { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) f64(v float64)    { e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v)) }

// time writes t as a delta from prev (in seconds, wrapping), so a column of nearby times stays small.
func (e *enc) time(t time.Time, prev int64) int64 {
	s := t.Unix()
	e.varint(s - prev)
	e.uvarint(uint64(t.Nanosecond()))
	return s
}

// dec reads what enc wrote. The first failure sticks: later reads return zero values and err names the
// first problem, wrapped in ErrCorrupt.
type dec struct {
	b   []byte
	err error
}

func (d *dec) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	d.b = nil
}

func (d *dec) uvarint(what string) uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("%s: bad varint", what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) varint(what string) int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("%s: bad varint", what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length that must not exceed max nor the bytes left (every counted entry takes at least
// one byte), so a lying count cannot make the decoder allocate more than the input justifies.
func (d *dec) count(what string, max uint64) int {
	n := d.uvarint(what)
	if d.err == nil && (n > max || n > uint64(len(d.b))) {
		d.fail("%s: count %d out of range", what, n)
		return 0
	}
	return int(n)
}

func (d *dec) str(what string) string {
	n := d.uvarint(what)
	if d.err == nil && n > uint64(len(d.b)) {
		d.fail("%s: length %d past the end", what, n)
	}
	if d.err != nil {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *dec) f64(what string) float64 {
	if len(d.b) < 8 {
		d.fail("%s: truncated", what)
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

// time reads a time written by enc.time with the same prev.
func (d *dec) time(what string, prev int64) (time.Time, int64) {
	s := prev + d.varint(what)
	ns := d.uvarint(what)
	if d.err != nil {
		return time.Time{}, 0
	}
	if ns >= 1e9 || s < minSec || s > maxSec {
		d.fail("%s: time out of range", what)
		return time.Time{}, 0
	}
	return time.Unix(s, int64(ns)).UTC(), s
}
