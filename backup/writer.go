package backup

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"time"
)

// Writer streams a backup: the manifest, then parts one at a time, then the trailer. Nothing is buffered beyond
// one chunk, so a shard of any size passes through in constant memory.
type Writer struct {
	out   *bufio.Writer
	whole hash.Hash // every byte before the trailer
	sum   Summary
	open  bool
	done  bool
	now   func() time.Time
}

// NewWriter writes the header and the manifest to w (Version is filled in).
func NewWriter(w io.Writer, m Manifest) (*Writer, error) {
	bw := &Writer{out: bufio.NewWriterSize(w, 1<<16), whole: sha256.New(), now: time.Now}
	m.Version = Version
	if err := bw.raw(append([]byte(magic), Version)); err != nil {
		return nil, err
	}
	if err := bw.record(recManifest, m); err != nil {
		return nil, err
	}
	return bw, nil
}

func (w *Writer) raw(p []byte) error {
	w.whole.Write(p)
	_, err := w.out.Write(p)
	return err
}

func (w *Writer) record(kind byte, v any) error {
	if err := w.raw([]byte{kind}); err != nil {
		return err
	}
	return w.json(v)
}

func (w *Writer) json(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := w.raw(binary.BigEndian.AppendUint32(nil, uint32(len(b)))); err != nil {
		return err
	}
	return w.raw(b)
}

// Part starts a part; write its bytes to the returned PartWriter and Close it before the next part.
func (w *Writer) Part(h PartHeader) (*PartWriter, error) {
	if w.open || w.done {
		return nil, fmt.Errorf("%w: part %q while a part is open or the file is closed", ErrClosed, h.Kind)
	}
	if err := w.record(recPart, h); err != nil {
		return nil, err
	}
	w.open = true
	return &PartWriter{w: w, kind: h.Kind, sum: sha256.New(), buf: make([]byte, 0, writeChunk)}, nil
}

// Close writes the trailer and the footer and flushes. It does not close the underlying writer.
func (w *Writer) Close() (Summary, error) {
	if w.open || w.done {
		return Summary{}, fmt.Errorf("%w: close with a part open, or twice", ErrClosed)
	}
	w.done = true
	if err := w.raw([]byte{recTrailer}); err != nil {
		return Summary{}, err
	}
	w.sum.Finished = w.now().UTC()
	w.sum.SHA256 = hex.EncodeToString(w.whole.Sum(nil))
	b, err := json.Marshal(w.sum)
	if err != nil {
		return Summary{}, err
	}
	tail := binary.BigEndian.AppendUint32(nil, uint32(len(b)))
	tail = append(tail, b...)
	tail = binary.BigEndian.AppendUint32(tail, crc32.Checksum(b, castagnoli))
	tail = binary.BigEndian.AppendUint32(tail, uint32(len(b)))
	tail = append(tail, footerMagic...)
	if _, err := w.out.Write(tail); err != nil {
		return Summary{}, err
	}
	return w.sum, w.out.Flush()
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// PartWriter receives one part's bytes in chunks.
type PartWriter struct {
	w     *Writer
	kind  string
	sum   hash.Hash
	buf   []byte
	bytes int64
	// Records, Memories and Index are what the caller knows of the part; they go into its end record.
	Records, Memories, Index uint64
}

// Write implements io.Writer.
func (p *PartWriter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		k := min(len(b), cap(p.buf)-len(p.buf))
		p.buf = append(p.buf, b[:k]...)
		b = b[k:]
		if len(p.buf) == cap(p.buf) {
			if err := p.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func (p *PartWriter) flush() error {
	if len(p.buf) == 0 {
		return nil
	}
	if err := p.w.raw(binary.BigEndian.AppendUint32(nil, uint32(len(p.buf)))); err != nil {
		return err
	}
	if err := p.w.raw(p.buf); err != nil {
		return err
	}
	p.sum.Write(p.buf)
	p.bytes += int64(len(p.buf))
	p.buf = p.buf[:0]
	return nil
}

// Close ends the part with its checksum and counts.
func (p *PartWriter) Close() (PartEnd, error) {
	if err := p.flush(); err != nil {
		return PartEnd{}, err
	}
	if err := p.w.raw([]byte{0, 0, 0, 0}); err != nil {
		return PartEnd{}, err
	}
	end := PartEnd{Bytes: p.bytes, SHA256: hex.EncodeToString(p.sum.Sum(nil)), Records: p.Records, Memories: p.Memories,
		Index: p.Index}
	if err := p.w.json(end); err != nil {
		return PartEnd{}, err
	}
	p.w.open = false
	s := &p.w.sum
	s.Parts++
	s.Bytes += end.Bytes
	s.Records += end.Records
	s.Memories += end.Memories
	switch p.kind {
	case KindShard:
		s.Shards++
	case KindCold, KindColdRef:
		s.ColdObjects++
	}
	return end, nil
}
