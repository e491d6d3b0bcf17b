package retrieval

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"time"

	"github.com/memcluster/memcluster/internal/formats"
	"github.com/memcluster/memcluster/memory"
)

// A checkpoint file holds what an open otherwise rebuilds from every record of the shard: the vectors, the
// filter attributes and the timelines, as of an applied index. Layout (integers uvarint unless said, strings a
// uvarint length then the bytes):
//
//	"MCVC" | version | shard | applied index | restore epoch | model | dim | users
//	per user:   user | memories… | "" | vectors… | ""
//	memory:     id | type | agent | run | flags byte | occurred (when flagged: varint unix seconds, nanoseconds)
//	            | tags (count, strings) | actor | names (count, strings)
//	vector:     id | scale (float32) | dim × half-precision bits (uint16), as vector.Index stores the row
//	            (version 1: id | dim × float32)
//	trailer:    CRC-32C of everything before it, 4 bytes little-endian; fixed-size numbers are little-endian
//
// Ids are never empty (vector.ErrEmptyID; records need one), so an empty id ends each list: a user's lists are
// written while it changes, without counting them first.
const (
	checkpointMagic   = "MCVC"
	checkpointVersion = formats.VectorCheckpoint
	// checkpointFloats is the version whose vectors are float32, read still (rows are encoded again on load).
	checkpointFloats = formats.VectorCheckpointOldest
)

const (
	flagShared = 1 << iota
	flagRetired
	flagArchive
	flagOccurred
)

var (
	errCheckpointCorrupt = errors.New("checkpoint corrupt")
	castagnoli           = crc32.MakeTable(crc32.Castagnoli)
)

// checkpointHeader is what a checkpoint is of: a shard at an applied index, with an embedding model's vectors.
type checkpointHeader struct {
	shard   uint32
	applied uint64
	epoch   uint64 // the records' restore epoch (storage.DB.RestoreEpoch)
	model   string
	dim     int
	users   int
}

// ckptWriter encodes a checkpoint into w, keeping its CRC.
type ckptWriter struct {
	bw      *bufio.Writer
	crc     hash.Hash32
	buf     []byte
	version int // 0: checkpointVersion (tests write older ones)
}

// ckptBuffer is the checkpoint writer's buffer. Each shard taking writes checkpoints at most once every 30 s, so
// a node's shards write one every two seconds or so, most of them small; a megabyte each (as before) was one of
// the larger allocations of a consolidating node. A checkpoint of 100 MB still takes only 1,600 writes (some under
// the index's read lock, as before: the same bytes in smaller calls).
const ckptBuffer = 64 << 10

func newCkptWriter(w io.Writer) *ckptWriter {
	crc := crc32.New(castagnoli)
	return &ckptWriter{bw: bufio.NewWriterSize(io.MultiWriter(w, crc), ckptBuffer), crc: crc}
}

func (c *ckptWriter) uvarint(v uint64) { c.buf = binary.AppendUvarint(c.buf, v) }
func (c *ckptWriter) str(s string)     { c.uvarint(uint64(len(s))); c.buf = append(c.buf, s...) }

// flush hands the encoded bytes to the buffered writer; called per entry, so buf stays small.
func (c *ckptWriter) flush() error {
	_, err := c.bw.Write(c.buf)
	c.buf = c.buf[:0]
	return err
}

func (c *ckptWriter) header(h checkpointHeader) error {
	c.buf = append(c.buf, checkpointMagic...)
	c.uvarint(uint64(cmp.Or(c.version, checkpointVersion)))
	c.uvarint(uint64(h.shard))
	c.uvarint(h.applied)
	c.uvarint(h.epoch)
	c.str(h.model)
	c.uvarint(uint64(h.dim))
	c.uvarint(uint64(h.users))
	return c.flush()
}

func (c *ckptWriter) memory(id string, a *attrs, e *tlEntry) error {
	c.str(id)
	c.str(string(a.typ))
	c.str(a.agent)
	c.str(a.run)
	c.buf = append(c.buf, flagIf(a.shared, flagShared)|flagIf(a.retired, flagRetired)|flagIf(a.archive, flagArchive)|
		flagIf(!a.occurred.IsZero(), flagOccurred))
	if !a.occurred.IsZero() { // seconds and nanoseconds: UnixNano overflows outside 1678..2262
		c.buf = binary.AppendVarint(c.buf, a.occurred.Unix())
		c.uvarint(uint64(a.occurred.Nanosecond()))
	}
	c.strs(a.tags)
	c.str(e.actor)
	c.strs(e.names)
	return c.flush()
}

func (c *ckptWriter) strs(ss []string) {
	c.uvarint(uint64(len(ss)))
	for _, s := range ss {
		c.str(s)
	}
}

// vector writes one row as the vector index stores it.
func (c *ckptWriter) vector(id string, half []uint16, scale float32) error {
	c.str(id)
	c.buf = binary.LittleEndian.AppendUint32(c.buf, math.Float32bits(scale))
	for _, h := range half {
		c.buf = binary.LittleEndian.AppendUint16(c.buf, h)
	}
	return c.flush()
}

// end closes a list (an empty id).
func (c *ckptWriter) end() error { c.str(""); return c.flush() }

// finish writes the CRC trailer and flushes.
func (c *ckptWriter) finish() error {
	if err := c.bw.Flush(); err != nil {
		return err
	}
	_, err := c.bw.Write(binary.LittleEndian.AppendUint32(nil, c.crc.Sum32()))
	return cmp.Or(err, c.bw.Flush())
}

func flagIf(on bool, bit byte) byte {
	if on {
		return bit
	}
	return 0
}

// ckptReader decodes a checkpoint held in memory whose CRC was checked; the first malformed field sets err and
// every later read returns zero values.
type ckptReader struct {
	b       []byte
	err     error
	version int     // the file's format version
	syms    symbols // the values sym has read, each once
}

// newCkptReader checks data's magic, version and CRC.
func newCkptReader(data []byte) (*ckptReader, error) {
	if len(data) < len(checkpointMagic)+4 || string(data[:len(checkpointMagic)]) != checkpointMagic {
		return nil, fmt.Errorf("%w: not a checkpoint", errCheckpointCorrupt)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", errCheckpointCorrupt)
	}
	r := &ckptReader{b: body[len(checkpointMagic):]}
	v := r.uvarint()
	if r.err == nil && (v < checkpointFloats || v > checkpointVersion) {
		return nil, fmt.Errorf("%w: format version %d, this build reads %d to %d", errCheckpointCorrupt, v,
			checkpointFloats, checkpointVersion)
	}
	r.version = int(v)
	return r, r.err
}

func (r *ckptReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: truncated %s", errCheckpointCorrupt, what)
	}
	r.b = nil
}

func (r *ckptReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("integer")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *ckptReader) str() string { return string(r.raw()) }

// raw reads a string's bytes, without copying them.
func (r *ckptReader) raw() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail("string")
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

// strIn is str returning known's copy of the string when known holds it.
func (r *ckptReader) strIn(known map[string]string) string {
	b := r.raw()
	if s, ok := known[string(b)]; ok {
		return s
	}
	return string(b)
}

// sym is str for a value that many memories share (a type, an agent, a run, an actor, a name, a tag): every
// memory that holds it gets the same string rather than a copy of its own.
func (r *ckptReader) sym() string { return r.syms.internBytes(r.raw()) }

// symList reads a list of sym values.
func (r *ckptReader) symList() []string {
	n := r.uvarint()
	if n > uint64(len(r.b)) { // each string takes at least a byte
		r.fail("list")
		return nil
	}
	if n == 0 {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = r.sym()
	}
	return ss
}

func (r *ckptReader) header() checkpointHeader {
	return checkpointHeader{shard: uint32(r.uvarint()), applied: r.uvarint(), epoch: r.uvarint(), model: r.str(),
		dim: int(r.uvarint()), users: int(r.uvarint())}
}

// memory reads one memory entry; "" ends the user's list.
func (r *ckptReader) memory(user string) (string, *attrs, *tlEntry) {
	id := r.str()
	if id == "" {
		return "", nil, nil
	}
	a := &attrs{user: user, typ: memory.Type(r.sym()), agent: r.sym(), run: r.sym()}
	if len(r.b) == 0 {
		r.fail("memory")
		return "", nil, nil
	}
	flags := r.b[0]
	r.b = r.b[1:]
	a.shared, a.retired, a.archive = flags&flagShared != 0, flags&flagRetired != 0, flags&flagArchive != 0
	e := &tlEntry{}
	if flags&flagOccurred != 0 {
		sec, n := binary.Varint(r.b)
		if n <= 0 {
			r.fail("time")
			return "", nil, nil
		}
		r.b = r.b[n:]
		a.occurred = time.Unix(sec, int64(r.uvarint())).UTC()
	}
	e.occurred = a.occurred
	a.tags = r.symList()
	e.actor, e.names = r.sym(), r.symList()
	return id, a, e
}

// halfRow reads one row as the index stores it, its half-precision bits appended to half; "" ends the user's
// list. Its id is ids' copy when ids holds it (the id its memory was read under), so the two share one string.
func (r *ckptReader) halfRow(dim int, half []uint16, ids map[string]string) (string, []uint16, float32) {
	id := r.strIn(ids)
	if id == "" {
		return "", half, 0
	}
	if len(r.b) < 4+2*dim {
		r.fail("vector")
		return "", half, 0
	}
	scale := math.Float32frombits(binary.LittleEndian.Uint32(r.b))
	n := len(half)
	half = slices.Grow(half, dim)[:n+dim]
	dst, src := half[n:], r.b[4:4+2*dim]
	for i := range dst {
		dst[i] = binary.LittleEndian.Uint16(src[2*i : 2*i+2])
	}
	r.b = r.b[4+2*dim:]
	return id, half, scale
}

// vector reads one vector of dim floats (version 1), appended to v; "" ends the user's list; its id as halfRow's.
func (r *ckptReader) vector(dim int, v []float32, ids map[string]string) (string, []float32) {
	id := r.strIn(ids)
	if id == "" {
		return "", v
	}
	if len(r.b) < 4*dim {
		r.fail("vector")
		return "", v
	}
	n := len(v)
	v = slices.Grow(v, dim)[:n+dim]
	dst, src := v[n:], r.b[:4*dim]
	for i := range dst { // indexed, not appended: the bounds are checked once per vector, not per component
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i : 4*i+4]))
	}
	r.b = r.b[4*dim:]
	return id, v
}
