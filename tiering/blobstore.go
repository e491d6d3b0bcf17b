package tiering

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/aws/smithy-go"
	"github.com/cespare/xxhash/v2"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:// URLs
	_ "gocloud.dev/blob/memblob"  // mem:// URLs
	_ "gocloud.dev/blob/s3blob"   // s3:// URLs
	"gocloud.dev/gcerrors"
)

// BlobStore is a SegmentStore over a gocloud.dev/blob bucket: a local directory (fileblob), S3 or an
// S3-compatible store (s3blob), or memory (memblob). Writes are conditional (If-None-Match on S3, an
// existence check under a lock in fileblob, a lock in memblob), so two uploads of one key never replace
// each other.
type BlobStore struct {
	bucket *blob.Bucket
	// dir is the directory of a fileblob bucket opened by OpenBlobStore. fileblob renames a finished file
	// into place but does not fsync it; Put does, file and parent directories, before it reports success,
	// since the leader deletes the hot copies once the segment is acknowledged.
	dir string
	// puts serialises Puts of one key in this process. fileblob's IfNotExist checks and renames under a
	// mutex of its own writer, so two concurrent writers of one key could both pass the check and the
	// second would replace the first; S3 and memblob decide atomically anyway.
	puts [64]sync.Mutex
}

// NewBlobStore returns a store over bucket; the caller keeps ownership of the bucket. A fileblob bucket
// passed here is not fsynced by Put: open local directories with OpenBlobStore.
func NewBlobStore(bucket *blob.Bucket) *BlobStore { return &BlobStore{bucket: bucket} }

// OpenBlobStore opens a store by URL:
//
//	file:///var/lib/memcluster/cold      a local directory (created if missing; fsynced writes)
//	s3://bucket?region=eu-west-1&endpoint=https://minio:9000&use_path_style=true
//	mem://                                memory, for tests
//
// For file URLs it defaults metadata=skip (no ".attrs" sidecar files), no_tmp_dir=1 (temporary files sit
// next to their final name, so the rename is on one file system) and create_dir=1, unless the URL sets them.
// Close the store to release the bucket.
func OpenBlobStore(ctx context.Context, rawURL string) (*BlobStore, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: segment store url: %v", ErrInvalid, err)
	}
	dir := ""
	if u.Scheme == "file" {
		if dir, err = fileDir(u); err != nil {
			return nil, err
		}
	}
	b, err := OpenBucket(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("open segment store %s://%s: %w", u.Scheme, u.Host, err)
	}
	return &BlobStore{bucket: b, dir: dir}, nil
}

// OpenBucket opens a gocloud.dev/blob bucket by URL; for file URLs it defaults metadata=skip, no_tmp_dir=1 and
// create_dir=1 (see OpenBlobStore) unless the URL sets them. Backups open their locations with it too.
func OpenBucket(ctx context.Context, u *url.URL) (*blob.Bucket, error) {
	if u.Scheme == "file" {
		q := u.Query()
		for k, v := range map[string]string{"metadata": "skip", "no_tmp_dir": "1", "create_dir": "1"} {
			if _, set := q[k]; !set {
				q.Set(k, v)
			}
		}
		u.RawQuery = q.Encode()
	}
	return blob.OpenBucket(ctx, u.String())
}

// fileDir is the absolute directory of a file URL, as fileblob computes it.
func fileDir(u *url.URL) (string, error) {
	p := u.Path
	if u.Host == "." || os.PathSeparator != '/' {
		p = strings.TrimPrefix(p, "/")
	}
	abs, err := filepath.Abs(filepath.FromSlash(p))
	if err != nil {
		return "", fmt.Errorf("segment store directory %q: %w", p, err)
	}
	return abs, nil
}

// Close releases the bucket.
func (s *BlobStore) Close() error { return s.bucket.Close() }

// Put implements SegmentStore.
func (s *BlobStore) Put(ctx context.Context, key string, data []byte) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	mu := &s.puts[xxhash.Sum64String(key)%uint64(len(s.puts))]
	mu.Lock()
	defer mu.Unlock()
	err := s.bucket.WriteAll(ctx, key, data, &blob.WriterOptions{IfNotExist: true,
		ContentType: "application/octet-stream"})
	switch {
	case err == nil:
	case gcerrors.Code(err) == gcerrors.FailedPrecondition:
		err = s.sameBytes(ctx, key, data, err)
	case notImplemented(s.bucket, err):
		err = s.putUnconditional(ctx, key, data)
	}
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return s.sync(key)
}

// sameBytes decides a conditional write that found the key taken: a retry of the same upload succeeds.
func (s *BlobStore) sameBytes(ctx context.Context, key string, data []byte, writeErr error) error {
	old, err := s.bucket.ReadAll(ctx, key)
	switch {
	case gcerrors.Code(err) == gcerrors.NotFound:
		return writeErr // the precondition failed for another reason (e.g. a checksum mismatch)
	case err != nil:
		return err
	case !bytes.Equal(old, data):
		return ErrConflict
	}
	return nil
}

// notImplemented reports an S3-compatible store that does not support conditional writes.
func notImplemented(b *blob.Bucket, err error) bool {
	var ae smithy.APIError
	return b.ErrorAs(err, &ae) && ae.ErrorCode() == "NotImplemented"
}

// putUnconditional checks, then writes. Two writers may both pass the check; since a key names its content
// (SegmentID), they write the same bytes.
func (s *BlobStore) putUnconditional(ctx context.Context, key string, data []byte) error {
	ok, err := s.bucket.Exists(ctx, key)
	if err != nil {
		return err
	}
	if ok {
		return s.sameBytes(ctx, key, data, errors.New("key deleted during put"))
	}
	return s.bucket.WriteAll(ctx, key, data, &blob.WriterOptions{ContentType: "application/octet-stream"})
}

// sync makes a fileblob write durable: the file, then every directory from its parent up to the root
// (MkdirAll may have created several).
func (s *BlobStore) sync(key string) error {
	if s.dir == "" {
		return nil
	}
	p := filepath.Join(s.dir, filepath.FromSlash(key))
	if err := fsync(p); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if err := fsync(d); err != nil {
			return fmt.Errorf("put %s: %w", key, err)
		}
		if d == s.dir || d == filepath.Dir(d) {
			return nil
		}
	}
}

func fsync(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Get implements SegmentStore.
func (s *BlobStore) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ValidKey(key); err != nil {
		return nil, err
	}
	b, err := s.bucket.ReadAll(ctx, key)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	return b, nil
}

// Delete implements SegmentStore.
func (s *BlobStore) Delete(ctx context.Context, key string) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	err := s.bucket.Delete(ctx, key)
	if err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

// List implements SegmentStore. Names that are not valid keys (temporary files of fileblob, which end in
// ".tmp", or objects some other tool put in the bucket) are left out.
func (s *BlobStore) List(ctx context.Context, prefix string) ([]string, error) {
	if err := ValidPrefix(prefix); err != nil {
		return nil, err
	}
	var out []string
	it := s.bucket.List(&blob.ListOptions{Prefix: prefix})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", prefix, err)
		}
		if !obj.IsDir && ValidKey(obj.Key) == nil {
			out = append(out, obj.Key)
		}
	}
	slices.Sort(out)
	return out, nil
}
