package storage

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// A backup stream restores into another shard id with the same keys, and the empty stream empties a shard.
func TestWriteBackupRoundTrip(t *testing.T) {
	db, err := Open("db", Options{FS: vfs.NewMem(), Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	src, _ := NewShardFSM(db, 1, nil, quietLog(), nil)
	stream := craftSnapshot(t, func(w io.Writer) {
		for i := range 100 {
			k := []byte{'d', 1, 'u'}
			k = binary.BigEndian.AppendUint32(k, uint32(i))
			_, _ = w.Write(append(append(binary.AppendUvarint(nil, uint64(len(k))), k...), 1, 'v'))
		}
		_, _ = w.Write([]byte{2, 'f', 'x', 1, 'v'}) // a side record: a key, not a memory
	}, 101)
	if err := src.Restore(io.NopCloser(bytes.NewReader(stream))); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	st, err := src.WriteBackup(&buf)
	if err != nil || st.Records != 101 || st.Memories != 100 || st.Index != 9 || st.Term != 1 {
		t.Fatalf("backup %+v %v", st, err)
	}
	dst, _ := NewShardFSM(db, 7, nil, quietLog(), nil)
	if err := dst.Restore(io.NopCloser(&buf)); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if st2, err := dst.WriteBackup(&buf); err != nil || st2 != st {
		t.Fatalf("restored copy %+v %v, want %+v", st2, err, st)
	}
	buf.Reset()
	if err := WriteEmptySnapshot(&buf, 3, 2); err != nil {
		t.Fatal(err)
	}
	if err := dst.Restore(io.NopCloser(&buf)); err != nil {
		t.Fatal(err)
	}
	if st3, err := dst.WriteBackup(io.Discard); err != nil || st3.Records != 0 || st3.Index != 3 {
		t.Fatalf("emptied %+v %v", st3, err)
	}
}
