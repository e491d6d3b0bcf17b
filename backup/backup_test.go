package backup

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// sample writes a backup of two shard parts (one spanning several chunks) and a cold part.
func sample(t *testing.T, big int) ([]byte, [][]byte) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Manifest{Created: time.Unix(1, 0).UTC(), Buckets: 2, Cold: ColdIncluded,
		Shards: []Shard{{ID: 0}, {ID: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	payloads := [][]byte{make([]byte, big), []byte("small"), []byte("segment")}
	for _, p := range payloads[:1] {
		for i := range p {
			p[i] = byte(rng.UintN(256))
		}
	}
	heads := []PartHeader{{Kind: KindShard, Shard: 0}, {Kind: KindShard, Shard: 1}, {Kind: KindCold, Key: "seg/a"}}
	for i, h := range heads {
		pw, err := w.Part(h)
		if err != nil {
			t.Fatal(err)
		}
		pw.Memories, pw.Records = uint64(i+1), uint64(i+2)
		if _, err := pw.Write(payloads[i]); err != nil {
			t.Fatal(err)
		}
		if _, err := pw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), payloads
}

func TestRoundTrip(t *testing.T) {
	file, payloads := sample(t, 3*writeChunk+17)
	rd, err := NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if m := rd.Manifest(); m.Version != Version || m.Buckets != 2 || len(m.Shards) != 2 {
		t.Fatalf("manifest %+v", m)
	}
	for i := 0; ; i++ {
		p, err := rd.Next()
		if err == io.EOF {
			if i != 3 {
				t.Fatalf("%d parts", i)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, payloads[i]) || p.End.Memories != uint64(i+1) {
			t.Fatalf("part %d: %d bytes, end %+v", i, len(got), p.End)
		}
	}
	s := rd.Summary()
	if s.Parts != 3 || s.Shards != 2 || s.ColdObjects != 1 || s.Memories != 6 || s.Records != 9 {
		t.Fatalf("summary %+v", s)
	}
	sum, err := ReadSummary(bytes.NewReader(file), int64(len(file)))
	if err != nil || sum != s {
		t.Fatalf("ReadSummary %+v %v", sum, err)
	}
}

// Every single flipped byte — header, manifest, chunk lengths, payload, part ends, trailer, footer — is refused.
func TestFlippedByteRefused(t *testing.T) {
	file, _ := sample(t, 3000)
	bad := make([]byte, len(file))
	for i := range file {
		copy(bad, file)
		bad[i] ^= 0x20
		if _, _, err := Verify(bytes.NewReader(bad), nil); err == nil {
			t.Fatalf("flipped byte %d of %d accepted", i, len(file))
		}
	}
}

func TestTruncatedAndForeign(t *testing.T) {
	file, _ := sample(t, 3*writeChunk+17)
	for _, n := range []int{0, 5, 9, 40, len(file) / 2, len(file) - 17, len(file) - 1} {
		_, _, err := Verify(bytes.NewReader(file[:n]), nil)
		if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrForeign) {
			t.Fatalf("truncated at %d: %v", n, err)
		}
	}
	if _, _, err := Verify(bytes.NewReader(append(file, 0)), nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("trailing byte: %v", err)
	}
	if _, _, err := Verify(bytes.NewReader([]byte("PK\x03\x04 a zip file, not a backup")), nil); !errors.Is(err, ErrForeign) {
		t.Fatalf("foreign: %v", err)
	}
	other := append([]byte(nil), file...)
	other[len(magic)] = 9
	if _, _, err := Verify(bytes.NewReader(other), nil); !errors.Is(err, ErrVersion) {
		t.Fatalf("version: %v", err)
	}
}

func TestLocationCommitAbortListPrune(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file, _ := sample(t, 3000)
	s, err := Create(ctx, filepath.Join(dir, "aborted"+Ext))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = s.Write(file[:100])
	s.Abort()
	for i := range 3 {
		s, err := CreateNamed(ctx, "file://"+dir, time.Date(2026, 1, 1, i, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write(file); err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Fatalf("%d files after an abort and 3 commits: %v", len(ents), ents)
	}
	gone, err := Prune(ctx, dir, 2)
	if err != nil || len(gone) != 1 || gone[0] != "memcluster-20260101T000000.000Z"+Ext {
		t.Fatalf("prune: %v %v", gone, err)
	}
	list, err := List(ctx, dir)
	if err != nil || len(list) != 2 || list[0].Summary == nil || list[0].Summary.Memories != 6 || list[1].Size != int64(len(file)) {
		t.Fatalf("list: %+v %v", list, err)
	}
	rc, size, err := Open(ctx, filepath.Join(dir, list[1].Name))
	if err != nil || size != int64(len(file)) {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, _, err := Verify(rc, nil); err != nil {
		t.Fatal(err)
	}
}
