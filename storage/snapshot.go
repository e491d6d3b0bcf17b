package storage

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cockroachdb/pebble/v2"
	"github.com/hashicorp/raft"
	"github.com/klauspost/compress/zstd"

	"github.com/memcluster/memcluster/internal/formats"
)

// Snapshot stream, version 1, zstd-compressed (frames carry checksums):
//
//	"MCSNAP" [version u8] [applied index u64] [applied term u64]
//	repeated: [uvarint len(key suffix)] [key suffix] [uvarint len(value)] [value]
//	[uvarint 0] [record count u64]
//
// Keys are stored without the shard prefix so a snapshot restores into whichever shard id receives it.
const snapshotVersion = formats.Snapshot

var snapshotMagic = []byte("MCSNAP")

type shardSnapshot struct {
	snap  *pebble.Snapshot
	shard uint32
	index uint64
	term  uint64
}

// Persist implements raft.FSMSnapshot.
func (s *shardSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := s.write(sink); err != nil {
		sink.Cancel()
		return fmt.Errorf("persist shard %d snapshot: %w", s.shard, err)
	}
	return sink.Close()
}

// Release implements raft.FSMSnapshot.
func (s *shardSnapshot) Release() { s.snap.Close() }

// write streams the snapshot and counts its keys and, among them, memory records.
func (s *shardSnapshot) write(w io.Writer) (st BackupStats, err error) {
	st.Index, st.Term = s.index, s.term
	zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		return st, err
	}
	bw := bufio.NewWriterSize(zw, 1<<16)
	hdr := append([]byte(nil), snapshotMagic...)
	hdr = append(hdr, snapshotVersion)
	hdr = binary.BigEndian.AppendUint64(hdr, s.index)
	hdr = binary.BigEndian.AppendUint64(hdr, s.term)
	if _, err := bw.Write(hdr); err != nil {
		return st, err
	}
	lo, hi := stateRange(s.shard)
	it, err := s.snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return st, err
	}
	defer it.Close()
	prefixLen := len(shardPrefix(s.shard))
	var count uint64
	var scratch []byte
	for ok := it.First(); ok; ok = it.Next() {
		scratch = binary.AppendUvarint(scratch[:0], uint64(len(it.Key())-prefixLen))
		scratch = append(scratch, it.Key()[prefixLen:]...)
		scratch = binary.AppendUvarint(scratch, uint64(len(it.Value())))
		scratch = append(scratch, it.Value()...)
		if _, err := bw.Write(scratch); err != nil {
			return st, err
		}
		count++
		if it.Key()[prefixLen] == subData {
			st.Memories++
		}
	}
	if err := it.Error(); err != nil {
		return st, err
	}
	tail := binary.AppendUvarint(nil, 0)
	tail = binary.BigEndian.AppendUint64(tail, count)
	if _, err := bw.Write(tail); err != nil {
		return st, err
	}
	if err := bw.Flush(); err != nil {
		return st, err
	}
	st.Records = count
	return st, zw.Close()
}

// RestoreLimits bound what a snapshot stream may decode to. A corrupt or hostile stream (a few KiB of zstd can
// expand to gigabytes) then fails with ErrBadSnapshot instead of stalling the node or filling its disk.
type RestoreLimits struct {
	// MaxRecordBytes bounds one key or value; default 16 MiB (a memory record is under 100 KiB with the
	// default memory.Limits).
	MaxRecordBytes int64
	// MaxTotalBytes bounds the whole decoded stream; default 256 GiB, more than one node holds of a shard.
	MaxTotalBytes int64
}

func (l RestoreLimits) withDefaults() RestoreLimits {
	if l.MaxRecordBytes <= 0 {
		l.MaxRecordBytes = 16 << 20
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = 256 << 30
	}
	return l
}

// maxSnapshotWindow bounds the zstd window a stream may ask for (the decoder allocates it up front); the writer
// uses 8 MiB. One decoder goroutine: restore is I/O-bound, and a synchronous decoder reads its input only
// when restore asks for bytes.
const maxSnapshotWindow = 16 << 20

// restoreBatchBytes is how much restore buffers before committing to Pebble.
const restoreBatchBytes = 4 << 20

// restoreShard replaces the shard's state with a snapshot stream. A marker key, written durably first and
// removed in the same durable batch that sets the applied index, makes an interrupted restore visible at the
// next start, when the shard is wiped and restored again.
func restoreShard(d *DB, shard uint32, r io.Reader) error {
	if err := d.db.Set(restoreKey(shard), []byte{1}, pebble.Sync); err != nil {
		return err
	}
	lo, hi := stateRange(shard)
	if err := d.deleteRange(lo, hi, pebble.NoSync); err != nil {
		return err
	}
	zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxSnapshotWindow))
	if err != nil {
		return err
	}
	defer zr.Close()
	lim := d.opts.Restore
	br := bufio.NewReaderSize(&capReader{r: zr, left: lim.MaxTotalBytes, max: lim.MaxTotalBytes}, 1<<16)
	index, term, err := readSnapshotHeader(br)
	if err != nil {
		return err
	}
	if err := copyRecords(d, shard, br, lim.MaxRecordBytes); err != nil {
		return err
	}
	epoch, err := d.RestoreEpoch(shard)
	if err != nil {
		return err
	}
	b := d.db.NewBatch()
	defer b.Close()
	_ = b.Set(appliedKey(shard), appliedValue(index, term), nil)
	_ = b.Set(epochKey(shard), binary.BigEndian.AppendUint64(nil, epoch+1), nil)
	_ = b.Delete(restoreKey(shard), nil)
	return d.commit(b, pebble.Sync)
}

// SnapshotIndex reads the applied index and term a snapshot stream's header says its state is at.
func SnapshotIndex(r io.Reader) (index, term uint64, err error) {
	zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxSnapshotWindow))
	if err != nil {
		return 0, 0, err
	}
	defer zr.Close()
	return readSnapshotHeader(bufio.NewReader(zr))
}

func readSnapshotHeader(br *bufio.Reader) (index, term uint64, err error) {
	hdr := make([]byte, len(snapshotMagic)+1+16)
	if _, err := io.ReadFull(br, hdr); err != nil {
		return 0, 0, badSnapshot("header", err)
	}
	if string(hdr[:len(snapshotMagic)]) != string(snapshotMagic) || hdr[len(snapshotMagic)] != snapshotVersion {
		return 0, 0, fmt.Errorf("%w: magic or version", ErrBadSnapshot)
	}
	h := hdr[len(snapshotMagic)+1:]
	return binary.BigEndian.Uint64(h), binary.BigEndian.Uint64(h[8:]), nil
}

func copyRecords(d *DB, shard uint32, br *bufio.Reader, maxRecord int64) error {
	prefix := shardPrefix(shard)
	b := d.db.NewBatch()
	defer func() { b.Close() }()
	var count uint64
	for {
		k, err := readChunk(br, maxRecord)
		if err != nil {
			return err
		}
		if len(k) == 0 {
			break
		}
		v, err := readChunk(br, maxRecord)
		if err != nil {
			return err
		}
		if err := b.Set(append(append([]byte(nil), prefix...), k...), v, nil); err != nil {
			return err
		}
		count++
		if b.Len() > restoreBatchBytes {
			if err := commitRestoreBatch(d, b); err != nil {
				return err
			}
			b.Close()
			b = d.db.NewBatch()
		}
	}
	var want [8]byte
	if _, err := io.ReadFull(br, want[:]); err != nil || binary.BigEndian.Uint64(want[:]) != count {
		return fmt.Errorf("%w: record count", ErrBadSnapshot)
	}
	return commitRestoreBatch(d, b)
}

// commitRestoreBatch gives up when the node went read-only: Pebble treats a failed WAL write as fatal, so a
// restore must not be what fills the disk. Raft retries the install later; the marker makes it start over.
func commitRestoreBatch(d *DB, b *pebble.Batch) error {
	if err := d.WriteHealth(); err != nil {
		return err
	}
	return d.commit(b, pebble.NoSync)
}

// readChunk reads one length-prefixed key or value. The buffer grows with the bytes actually read, never
// with the length the stream claims.
func readChunk(br *bufio.Reader, limit int64) ([]byte, error) {
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, badSnapshot("record length", err)
	}
	if n > uint64(limit) {
		return nil, fmt.Errorf("%w: record of %d bytes exceeds the %d-byte limit", ErrBadSnapshot, n, limit)
	}
	buf, err := io.ReadAll(io.LimitReader(br, int64(n)))
	if err == nil && uint64(len(buf)) != n {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, badSnapshot("record", err)
	}
	return buf, nil
}

// badSnapshot marks a read error as ErrBadSnapshot once (capReader's errors already are).
func badSnapshot(what string, err error) error {
	if errors.Is(err, ErrBadSnapshot) {
		return err
	}
	return fmt.Errorf("%w: %s: %w", ErrBadSnapshot, what, err)
}

// capReader fails once more than max bytes were read through it.
type capReader struct {
	r         io.Reader
	left, max int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// Exactly max bytes is fine: only a byte beyond it is an error.
		var one [1]byte
		if _, err := io.ReadFull(c.r, one[:]); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("%w: decoded stream larger than the %d-byte limit", ErrBadSnapshot, c.max)
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}
