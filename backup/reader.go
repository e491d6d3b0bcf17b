package backup

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
)

// Reader reads a backup sequentially, checking every checksum as it goes: a part's bytes are checked when its
// end is reached, the whole file when Next reaches the trailer. A caller that applies data must therefore read
// the file to the end first (Verify) and apply in a second pass.
type Reader struct {
	src     *bufio.Reader
	whole   hash.Hash
	m       Manifest
	part    *Part
	counted Summary
	sum     Summary
	done    bool
}

// NewReader reads the header and the manifest.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{src: bufio.NewReaderSize(r, 1<<16), whole: sha256.New()}
	head := make([]byte, len(magic)+1)
	if err := rd.full(head, "header"); err != nil {
		if errors.Is(err, ErrTruncated) {
			return nil, fmt.Errorf("%w: shorter than a backup header", ErrForeign)
		}
		return nil, err
	}
	if string(head[:len(magic)]) != magic {
		return nil, fmt.Errorf("%w: bad magic %q", ErrForeign, head[:len(magic)])
	}
	if head[len(magic)] != Version {
		return nil, fmt.Errorf("%w: %d (this build reads %d)", ErrVersion, head[len(magic)], Version)
	}
	kind, err := rd.byte("manifest")
	if err != nil {
		return nil, err
	}
	if kind != recManifest {
		return nil, fmt.Errorf("%w: record %q where the manifest belongs", ErrCorrupt, kind)
	}
	if err := rd.json(&rd.m, "manifest"); err != nil {
		return nil, err
	}
	return rd, nil
}

// Manifest is the backup's manifest.
func (r *Reader) Manifest() Manifest { return r.m }

// Summary is the trailer, valid once Next returned io.EOF.
func (r *Reader) Summary() Summary { return r.sum }

func (r *Reader) full(p []byte, what string) error {
	if _, err := io.ReadFull(r.src, p); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: ends inside the %s", ErrTruncated, what)
		}
		return fmt.Errorf("read %s: %w", what, err)
	}
	r.whole.Write(p)
	return nil
}

func (r *Reader) byte(what string) (byte, error) {
	var b [1]byte
	err := r.full(b[:], what)
	return b[0], err
}

func (r *Reader) u32(what string) (uint32, error) {
	var b [4]byte
	if err := r.full(b[:], what); err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(b[:]), nil
}

func (r *Reader) json(v any, what string) error {
	n, err := r.u32(what + " length")
	if err != nil {
		return err
	}
	if n > maxJSON {
		return fmt.Errorf("%w: %s of %d bytes", ErrCorrupt, what, n)
	}
	b := make([]byte, n)
	if err := r.full(b, what); err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCorrupt, what, err)
	}
	return nil
}

// Next returns the next part, draining what the caller left of the previous one, or io.EOF once the trailer has
// been read and the whole file's checksum and totals match it.
func (r *Reader) Next() (*Part, error) {
	if r.done {
		return nil, io.EOF
	}
	if r.part != nil && !r.part.eof {
		if _, err := io.Copy(io.Discard, r.part); err != nil {
			return nil, err
		}
	}
	r.part = nil
	kind, err := r.byte("record kind")
	if err != nil {
		return nil, err
	}
	switch kind {
	case recPart:
		p := &Part{r: r, sum: sha256.New()}
		if err := r.json(&p.Header, "part header"); err != nil {
			return nil, err
		}
		r.part = p
		return p, nil
	case recTrailer:
		return nil, r.trailer()
	}
	return nil, fmt.Errorf("%w: unknown record %q", ErrCorrupt, kind)
}

func (r *Reader) trailer() error {
	want := hex.EncodeToString(r.whole.Sum(nil))
	n, err := r.u32("trailer length")
	if err != nil {
		return err
	}
	if n > maxJSON {
		return fmt.Errorf("%w: trailer of %d bytes", ErrCorrupt, n)
	}
	body := make([]byte, n)
	if err := r.full(body, "trailer"); err != nil {
		return err
	}
	foot := make([]byte, footerSize)
	if err := r.full(foot, "footer"); err != nil {
		return err
	}
	sum, err := parseTrailer(body, foot)
	if err != nil {
		return err
	}
	if _, err := r.src.ReadByte(); err != io.EOF {
		return fmt.Errorf("%w: bytes after the footer", ErrCorrupt)
	}
	if sum.SHA256 != want {
		return fmt.Errorf("%w: whole-file checksum mismatch", ErrCorrupt)
	}
	c := r.counted
	if sum.Parts != c.Parts || sum.Shards != c.Shards || sum.Bytes != c.Bytes || sum.Memories != c.Memories ||
		sum.Records != c.Records || sum.ColdObjects != c.ColdObjects {
		return fmt.Errorf("%w: trailer totals do not match the parts", ErrCorrupt)
	}
	r.sum, r.done = sum, true
	return io.EOF
}

// parseTrailer checks the footer against the trailer JSON and decodes it.
func parseTrailer(body, foot []byte) (Summary, error) {
	if string(foot[8:]) != footerMagic {
		return Summary{}, fmt.Errorf("%w: bad footer", ErrCorrupt)
	}
	if binary.BigEndian.Uint32(foot[4:8]) != uint32(len(body)) || binary.BigEndian.Uint32(foot[:4]) != crc32.Checksum(body, castagnoli) {
		return Summary{}, fmt.Errorf("%w: trailer checksum mismatch", ErrCorrupt)
	}
	var s Summary
	if err := json.Unmarshal(body, &s); err != nil {
		return Summary{}, fmt.Errorf("%w: trailer: %v", ErrCorrupt, err)
	}
	return s, nil
}

// Part is one part's bytes; Read returns io.EOF only once its checksum matched its end record.
type Part struct {
	Header PartHeader
	End    PartEnd // valid after io.EOF
	r      *Reader
	sum    hash.Hash
	left   uint32
	bytes  int64
	eof    bool
}

// Read implements io.Reader.
func (p *Part) Read(b []byte) (int, error) {
	if p.eof {
		return 0, io.EOF
	}
	if p.left == 0 {
		n, err := p.r.u32("chunk length")
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, p.end()
		}
		if n > maxChunk {
			return 0, fmt.Errorf("%w: chunk of %d bytes", ErrCorrupt, n)
		}
		p.left = n
	}
	b = b[:min(len(b), int(p.left))]
	if err := p.r.full(b, "part"); err != nil {
		return 0, err
	}
	p.sum.Write(b)
	p.left -= uint32(len(b))
	p.bytes += int64(len(b))
	return len(b), nil
}

func (p *Part) end() error {
	if err := p.r.json(&p.End, "part end"); err != nil {
		return err
	}
	if p.End.Bytes != p.bytes || p.End.SHA256 != hex.EncodeToString(p.sum.Sum(nil)) {
		return fmt.Errorf("%w: %s part %s: checksum mismatch", ErrCorrupt, p.Header.Kind, p.name())
	}
	p.eof = true
	c := &p.r.counted
	c.Parts++
	c.Bytes += p.End.Bytes
	c.Records += p.End.Records
	c.Memories += p.End.Memories
	switch p.Header.Kind {
	case KindShard:
		c.Shards++
	case KindCold, KindColdRef:
		c.ColdObjects++
	}
	return io.EOF
}

func (p *Part) name() string {
	if p.Header.Kind == KindShard {
		return fmt.Sprint(p.Header.Shard)
	}
	return p.Header.Key
}

// Verify reads a whole backup, checking every checksum; onPart (optional) sees each part once checked, with the
// manifest.
func Verify(r io.Reader, onPart func(Manifest, PartHeader, PartEnd)) (Manifest, Summary, error) {
	rd, err := NewReader(r)
	if err != nil {
		return Manifest{}, Summary{}, err
	}
	for {
		p, err := rd.Next()
		if err == io.EOF {
			return rd.m, rd.sum, nil
		}
		if err != nil {
			return rd.m, Summary{}, err
		}
		if _, err := io.Copy(io.Discard, p); err != nil {
			return rd.m, Summary{}, err
		}
		if onPart != nil {
			onPart(rd.m, p.Header, p.End)
		}
	}
}

// ReadSummary reads the trailer from the end of a backup of size bytes without reading the rest (listing).
// It checks the trailer's own checksum only; Verify checks the file.
func ReadSummary(ra io.ReaderAt, size int64) (Summary, error) {
	if size < int64(footerSize) {
		return Summary{}, fmt.Errorf("%w: %d bytes", ErrTruncated, size)
	}
	foot := make([]byte, footerSize)
	if _, err := ra.ReadAt(foot, size-int64(footerSize)); err != nil {
		return Summary{}, err
	}
	n := int64(binary.BigEndian.Uint32(foot[4:8]))
	if string(foot[8:]) != footerMagic || n > maxJSON || n > size-int64(footerSize) {
		return Summary{}, fmt.Errorf("%w: no backup footer", ErrTruncated)
	}
	body := make([]byte, n)
	if _, err := ra.ReadAt(body, size-int64(footerSize)-n); err != nil {
		return Summary{}, err
	}
	return parseTrailer(body, foot)
}
