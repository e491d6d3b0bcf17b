package tiering_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gocloud.dev/blob/memblob"

	"github.com/memcluster/memcluster/tiering"
	"github.com/memcluster/memcluster/tiering/storetest"
)

// The S3 backend (s3://...) is the same BlobStore over s3blob; it cannot run here (no S3 endpoint), so it
// is covered only through memblob and fileblob, which share every line of BlobStore but the driver.

func TestMemStoreConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) tiering.SegmentStore { return tiering.NewMemStore() })
}

func TestFileBlobConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) tiering.SegmentStore { return openFile(t, t.TempDir()) })
}

func TestMemBlobConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) tiering.SegmentStore {
		b := memblob.OpenBucket(nil)
		t.Cleanup(func() { b.Close() })
		return tiering.NewBlobStore(b)
	})
}

func openFile(t *testing.T, dir string) *tiering.BlobStore {
	t.Helper()
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}
	s, err := tiering.OpenBlobStore(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A local store creates its directory, keeps no sidecar files, and does not list the temporary file a
// crashed write leaves behind.
func TestFileBlobLayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cold", "segments")
	s := openFile(t, dir)
	ctx := context.Background()
	k := "v1/1/alice/episodic/a.seg"
	if err := s.Put(ctx, k, []byte("x")); err != nil {
		t.Fatal(err)
	}
	leftover := filepath.Join(dir, "v1", "1", "alice", "episodic", "b.seg.17f0c2a1.tmp")
	if err := os.WriteFile(leftover, []byte("torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	keys, err := s.List(ctx, "v1/")
	if err != nil || len(keys) != 1 || keys[0] != k {
		t.Fatalf("list = %q, %v; want only %s", keys, err, k)
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, filepath.Base(p))
		}
		return err
	})
	if len(files) != 2 { // the segment and the planted leftover, no .attrs sidecar
		t.Fatalf("files on disk: %q", files)
	}
}

func TestOpenBlobStoreURLs(t *testing.T) {
	s, err := tiering.OpenBlobStore(context.Background(), "mem://")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := tiering.OpenBlobStore(context.Background(), "nosuch://x"); err == nil {
		t.Fatal("unknown scheme opened")
	}
	if _, err := tiering.OpenBlobStore(context.Background(), "file:///tmp/x?bogus=1"); err == nil {
		t.Fatal("unknown file parameter accepted")
	}
}

// The s3:// path is wired (URL parameters accepted, errors wrapped and not mistaken for a conflict) even
// though no S3 endpoint runs here: the endpoint is a closed local port.
func TestOpenBlobStoreS3Unreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s, err := tiering.OpenBlobStore(context.Background(), "s3://segments?region=us-east-1&anonymous=true&use_path_style=true&endpoint=http://"+addr)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := func() context.Context { // the SDK retries until the deadline
		c, cancel := context.WithTimeout(context.Background(), time.Second)
		t.Cleanup(cancel)
		return c
	}
	err = s.Put(ctx(), "v1/1/u/episodic/a.seg", []byte("x"))
	if err == nil || errors.Is(err, tiering.ErrConflict) {
		t.Fatalf("put to an unreachable endpoint: %v", err)
	}
	if _, err := s.Get(ctx(), "v1/1/u/episodic/a.seg"); err == nil || errors.Is(err, tiering.ErrNotFound) {
		t.Fatalf("get from an unreachable endpoint: %v", err)
	}
}
