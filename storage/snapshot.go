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
)

// Snapshot stream, version 1, zstd-compressed (frames carry checksums):
//
//	"MCSNAP" [version u8] [applied index u64] [applied term u64]
//	repeated: [uvarint len(key suffix)] [key suffix] [uvarint len(value)] [value]
//	[uvarint 0] [record count u64]
//
// Keys are stored without the shard prefix so a snapshot restores into whichever shard id receives it.
const snapshotVersion = 1

var snapshotMagic = []byte("MCSNAP")

// ErrBadSnapshot is returned for a snapshot stream that does not decode.
var ErrBadSnapshot = errors.New("malformed snapshot")

type shardSnapshot struct {
	snap  *pebble.Snapshot
	shard uint32
	index uint64
	term  uint64
}

// Persist implements raft.FSMSnapshot.
func (s *shardSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := s.write(sink); err != nil {
		sink.Cancel()
		return fmt.Errorf("persist shard %d snapshot: %w", s.shard, err)
	}
	return sink.Close()
}

// Release implements raft.FSMSnapshot.
func (s *shardSnapshot) Release() { s.snap.Close() }

func (s *shardSnapshot) write(w io.Writer) error {
	zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(zw, 1<<16)
	hdr := append([]byte(nil), snapshotMagic...)
	hdr = append(hdr, snapshotVersion)
	hdr = binary.BigEndian.AppendUint64(hdr, s.index)
	hdr = binary.BigEndian.AppendUint64(hdr, s.term)
	if _, err := bw.Write(hdr); err != nil {
		return err
	}
	lo, hi := stateRange(s.shard)
	it, err := s.snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
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
			return err
		}
		count++
	}
	if err := it.Error(); err != nil {
		return err
	}
	tail := binary.AppendUvarint(nil, 0)
	tail = binary.BigEndian.AppendUint64(tail, count)
	if _, err := bw.Write(tail); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

// restoreShard replaces the shard's state with a snapshot stream. A marker key makes an interrupted restore
// visible at the next start, when the shard is wiped and restored again.
func restoreShard(d *DB, shard uint32, r io.Reader) error {
	if err := d.db.Set(restoreKey(shard), []byte{1}, pebble.Sync); err != nil {
		return err
	}
	lo, hi := stateRange(shard)
	if err := d.db.DeleteRange(lo, hi, pebble.NoSync); err != nil {
		return err
	}
	zr, err := zstd.NewReader(r)
	if err != nil {
		return err
	}
	defer zr.Close()
	br := bufio.NewReaderSize(zr, 1<<16)
	index, term, err := readSnapshotHeader(br)
	if err != nil {
		return err
	}
	if err := copyRecords(d, shard, br); err != nil {
		return err
	}
	b := d.db.NewBatch()
	defer b.Close()
	_ = b.Set(appliedKey(shard), appliedValue(index, term), nil)
	_ = b.Delete(restoreKey(shard), nil)
	return b.Commit(pebble.Sync)
}

func readSnapshotHeader(br *bufio.Reader) (index, term uint64, err error) {
	hdr := make([]byte, len(snapshotMagic)+1+16)
	if _, err := io.ReadFull(br, hdr); err != nil {
		return 0, 0, fmt.Errorf("%w: header: %v", ErrBadSnapshot, err)
	}
	if string(hdr[:len(snapshotMagic)]) != string(snapshotMagic) || hdr[len(snapshotMagic)] != snapshotVersion {
		return 0, 0, fmt.Errorf("%w: magic or version", ErrBadSnapshot)
	}
	h := hdr[len(snapshotMagic)+1:]
	return binary.BigEndian.Uint64(h), binary.BigEndian.Uint64(h[8:]), nil
}

func copyRecords(d *DB, shard uint32, br *bufio.Reader) error {
	prefix := shardPrefix(shard)
	b := d.db.NewBatch()
	defer func() { b.Close() }()
	var count uint64
	for {
		k, err := readChunk(br)
		if err != nil {
			return err
		}
		if len(k) == 0 {
			break
		}
		v, err := readChunk(br)
		if err != nil {
			return err
		}
		if err := b.Set(append(append([]byte(nil), prefix...), k...), v, nil); err != nil {
			return err
		}
		count++
		if b.Len() > 4<<20 {
			if err := b.Commit(pebble.NoSync); err != nil {
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
	return b.Commit(pebble.NoSync)
}

func readChunk(br *bufio.Reader) ([]byte, error) {
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSnapshot, err)
	}
	if n > 64<<20 {
		return nil, fmt.Errorf("%w: chunk of %d bytes", ErrBadSnapshot, n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(br, buf); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSnapshot, err)
	}
	return buf, nil
}
