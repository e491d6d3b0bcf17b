package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/klauspost/compress/zstd"
)

// craftSnapshot writes a snapshot stream by hand: header, then body, then the record-count tail (when
// count >= 0), all zstd-compressed like shardSnapshot.write.
func craftSnapshot(t *testing.T, body func(w io.Writer), count int64, opts ...zstd.EOption) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf, opts...)
	if err != nil {
		t.Fatal(err)
	}
	hdr := append(append([]byte(nil), snapshotMagic...), snapshotVersion)
	hdr = binary.BigEndian.AppendUint64(hdr, 9)
	hdr = binary.BigEndian.AppendUint64(hdr, 1)
	_, _ = zw.Write(hdr)
	body(zw)
	if count >= 0 {
		_, _ = zw.Write(binary.BigEndian.AppendUint64(binary.AppendUvarint(nil, 0), uint64(count)))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tinyRecords is the body of a decompression bomb: n records of a one-byte key and value.
func tinyRecords(n int) func(io.Writer) {
	return func(w io.Writer) {
		rec := []byte{1, 'd', 1, 'v'}
		chunk := bytes.Repeat(rec, 1<<16)
		for ; n >= 1<<16; n -= 1 << 16 {
			_, _ = w.Write(chunk)
		}
		_, _ = w.Write(bytes.Repeat(rec, n))
	}
}

func restoreWith(t *testing.T, lim RestoreLimits, stream []byte) error {
	t.Helper()
	db, err := Open("db", Options{FS: vfs.NewMem(), Logger: quietLog(), Restore: lim})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f, _ := NewShardFSM(db, 1, nil, quietLog(), nil)
	err = f.Restore(io.NopCloser(bytes.NewReader(stream)))
	if r, _ := db.Restoring(1); (err != nil) != r {
		t.Fatalf("restore error %v but marker present=%v: a failed restore must leave it, a done one remove it", err, r)
	}
	return err
}

// A few KiB of zstd can expand to gigabytes; restore stops at the configured sizes with a clear error.
func TestRestoreCapsDecodedSize(t *testing.T) {
	bomb := craftSnapshot(t, tinyRecords(1<<18), 1<<18) // 1 MiB decoded
	if len(bomb) > 4<<10 {
		t.Fatalf("bomb is %d bytes compressed; the test wants a small one", len(bomb))
	}
	if err := restoreWith(t, RestoreLimits{}, bomb); err != nil {
		t.Fatalf("1 MiB stream under default limits: %v", err)
	}
	err := restoreWith(t, RestoreLimits{MaxTotalBytes: 256 << 10}, bomb)
	if !errors.Is(err, ErrBadSnapshot) || !strings.Contains(err.Error(), "larger than the 262144-byte limit") {
		t.Fatalf("1 MiB stream with a 256 KiB cap: %v", err)
	}

	big := craftSnapshot(t, func(w io.Writer) {
		_, _ = w.Write([]byte{1, 'd'})
		_, _ = w.Write(binary.AppendUvarint(nil, 17<<20))
		_, _ = w.Write(make([]byte, 17<<20))
	}, 1)
	err = restoreWith(t, RestoreLimits{}, big)
	if !errors.Is(err, ErrBadSnapshot) || !strings.Contains(err.Error(), "record of 17825792 bytes exceeds the 16777216-byte limit") {
		t.Fatalf("17 MiB record under the default 16 MiB cap: %v", err)
	}

	// A length prefix claiming a terabyte is refused before anything is allocated for it.
	claim := craftSnapshot(t, func(w io.Writer) { _, _ = w.Write(binary.AppendUvarint([]byte{1, 'd'}, 1<<40)) }, -1)
	if err := restoreWith(t, RestoreLimits{}, claim); !errors.Is(err, ErrBadSnapshot) {
		t.Fatalf("record claiming 1 TiB: %v", err)
	}

	// Exactly at the total cap is fine.
	exact := craftSnapshot(t, tinyRecords(10), 10)
	var n int64
	zr, _ := zstd.NewReader(bytes.NewReader(exact))
	n, _ = io.Copy(io.Discard, zr)
	zr.Close()
	if err := restoreWith(t, RestoreLimits{MaxTotalBytes: n}, exact); err != nil {
		t.Fatalf("stream of exactly the cap (%d bytes): %v", n, err)
	}
	if err := restoreWith(t, RestoreLimits{MaxTotalBytes: n - 1}, exact); !errors.Is(err, ErrBadSnapshot) {
		t.Fatalf("stream one byte over the cap: %v", err)
	}
}

// rawFrame wraps content in a zstd frame by hand: one raw block under a frame header that declares a window of
// 1<<windowLog bytes, which the decoder allocates up front.
func rawFrame(windowLog int, content []byte) []byte {
	f := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, byte(windowLog-10) << 3}
	h := uint32(len(content))<<3 | 1 // raw block, last
	return append(append(f, byte(h), byte(h>>8), byte(h>>16)), content...)
}

// A frame may ask for a window of hundreds of MiB; restore refuses more than maxSnapshotWindow.
func TestRestoreRefusesHugeWindow(t *testing.T) {
	var body bytes.Buffer
	body.Write(append(append([]byte(nil), snapshotMagic...), snapshotVersion))
	body.Write(make([]byte, 16))
	tinyRecords(10)(&body)
	body.Write(binary.BigEndian.AppendUint64([]byte{0}, 10))
	if err := restoreWith(t, RestoreLimits{}, rawFrame(23, body.Bytes())); err != nil {
		t.Fatalf("an 8 MiB window, as the writer uses: %v", err)
	}
	if err := restoreWith(t, RestoreLimits{}, rawFrame(28, body.Bytes())); err == nil {
		t.Fatal("a 256 MiB window was accepted")
	}
}

// Each restore counts in the shard's restore epoch; a backup refuses a state a restore is still writing.
func TestRestoreEpochAndBackupDuringRestore(t *testing.T) {
	db := openMem(t, vfs.NewMem())
	defer db.Close()
	f, _ := NewShardFSM(db, 1, nil, quietLog(), nil)
	for want := uint64(0); want < 3; want++ {
		if got, err := db.RestoreEpoch(1); err != nil || got != want {
			t.Fatalf("epoch %d, %v; want %d", got, err, want)
		}
		var empty bytes.Buffer
		if err := WriteEmptySnapshot(&empty, 10*(want+1), 1); err != nil {
			t.Fatal(err)
		}
		if err := f.Restore(io.NopCloser(&empty)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.db.Set(restoreKey(1), []byte{1}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteBackup(io.Discard); err == nil {
		t.Fatal("a backup of a state mid-restore")
	}
}
