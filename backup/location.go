package backup

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gocloud.dev/blob"

	"github.com/memcluster/memcluster/tiering"
)

// Where backups go: a plain path, file:///path, or s3://bucket/key?region=…&endpoint=… (gocloud.dev/blob).
// A file is written under a temporary name and renamed (fileblob), or uploaded and completed (S3), only when
// the whole backup was written; an aborted write leaves nothing.

// Ext is the file name extension of backups the scheduler writes and List lists.
const Ext = ".mcbak"

// openBucket opens the bucket of a location that names a directory (or an S3 prefix); it returns the key prefix.
func openBucket(ctx context.Context, raw string) (*blob.Bucket, string, error) {
	u, err := parseLocation(raw)
	if err != nil {
		return nil, "", err
	}
	prefix := ""
	if u.Scheme == "s3" {
		prefix = strings.Trim(u.Path, "/")
		if prefix != "" {
			prefix += "/"
		}
		u.Path = ""
	}
	b, err := tiering.OpenBucket(ctx, u)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %s: %v", ErrLocation, raw, err)
	}
	return b, prefix, nil
}

// parseLocation turns a plain path into a file URL and checks the scheme.
func parseLocation(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, fmt.Errorf("%w: empty", ErrLocation)
	}
	if !strings.Contains(raw, "://") {
		abs, err := filepath.Abs(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrLocation, raw, err)
		}
		return &url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrLocation, raw, err)
	}
	if u.Scheme != "file" && u.Scheme != "s3" {
		return nil, fmt.Errorf("%w: %s: scheme must be file or s3 (or give a path)", ErrLocation, raw)
	}
	return u, nil
}

// splitFile splits a location naming one file into its directory location and the file's key.
func splitFile(raw string) (dir, key string, err error) {
	u, err := parseLocation(raw)
	if err != nil {
		return "", "", err
	}
	d, k := path.Split(u.Path)
	if k == "" {
		return "", "", fmt.Errorf("%w: %s names a directory, not a file", ErrLocation, raw)
	}
	u.Path = d
	return u.String(), k, nil
}

// Sink is a backup being written to a location; Commit makes it appear, Abort drops it.
type Sink struct {
	bucket *blob.Bucket
	w      *blob.Writer
	cancel context.CancelFunc
	Name   string
}

// Create opens the file location target for writing.
func Create(ctx context.Context, target string) (*Sink, error) {
	dir, key, err := splitFile(target)
	if err != nil {
		return nil, err
	}
	return createIn(ctx, dir, key)
}

func createIn(ctx context.Context, dir, key string) (*Sink, error) {
	b, prefix, err := openBucket(ctx, dir)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	w, err := b.NewWriter(wctx, prefix+key, &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		cancel()
		b.Close()
		return nil, fmt.Errorf("%w: create %s: %v", ErrLocation, key, err)
	}
	return &Sink{bucket: b, w: w, cancel: cancel, Name: key}, nil
}

// Write implements io.Writer.
func (s *Sink) Write(p []byte) (int, error) { return s.w.Write(p) }

// Commit completes the file.
func (s *Sink) Commit() error {
	defer s.bucket.Close()
	defer s.cancel()
	if err := s.w.Close(); err != nil {
		return fmt.Errorf("%w: complete %s: %v", ErrLocation, s.Name, err)
	}
	return nil
}

// Abort discards what was written (a canceled blob write leaves no object).
func (s *Sink) Abort() {
	s.cancel()
	_ = s.w.Close()
	s.bucket.Close()
}

// Open opens the file location source for reading; it returns the reader and the file's size.
func Open(ctx context.Context, source string) (io.ReadCloser, int64, error) {
	dir, key, err := splitFile(source)
	if err != nil {
		return nil, 0, err
	}
	b, prefix, err := openBucket(ctx, dir)
	if err != nil {
		return nil, 0, err
	}
	r, err := b.NewReader(ctx, prefix+key, nil)
	if err != nil {
		b.Close()
		return nil, 0, fmt.Errorf("%w: open %s: %v", ErrLocation, source, err)
	}
	return &bucketReader{Reader: r, b: b}, r.Size(), nil
}

type bucketReader struct {
	*blob.Reader
	b *blob.Bucket
}

func (r *bucketReader) Close() error {
	err := r.Reader.Close()
	r.b.Close()
	return err
}

// Listing is one backup found in a location.
type Listing struct {
	Name    string    `json:"name"`
	Time    time.Time `json:"time"`
	Size    int64     `json:"size"`
	Summary *Summary  `json:"summary,omitempty"` // nil: the file has no readable trailer
	Problem string    `json:"problem,omitempty"`
}

// List lists the backups (files ending in Ext) in the directory location dir, oldest first.
func List(ctx context.Context, dir string) ([]Listing, error) {
	b, prefix, err := openBucket(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	var out []Listing
	it := b.List(&blob.ListOptions{Prefix: prefix, Delimiter: "/"})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: list %s: %v", ErrLocation, dir, err)
		}
		if obj.IsDir || !strings.HasSuffix(obj.Key, Ext) {
			continue
		}
		l := Listing{Name: strings.TrimPrefix(obj.Key, prefix), Time: obj.ModTime, Size: obj.Size}
		if s, err := ReadSummary(&rangeReader{ctx: ctx, b: b, key: obj.Key}, obj.Size); err != nil {
			l.Problem = err.Error()
		} else {
			l.Summary, l.Time = &s, s.Finished
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// rangeReader reads parts of one object (io.ReaderAt over ranged reads).
type rangeReader struct {
	ctx context.Context
	b   *blob.Bucket
	key string
}

func (r *rangeReader) ReadAt(p []byte, off int64) (int, error) {
	rd, err := r.b.NewRangeReader(r.ctx, r.key, off, int64(len(p)), nil)
	if err != nil {
		return 0, err
	}
	defer rd.Close()
	return io.ReadFull(rd, p)
}

// Prune deletes all but the newest keep backups (by name, which the scheduler makes sortable by time) in dir and
// returns the names it deleted.
func Prune(ctx context.Context, dir string, keep int) ([]string, error) {
	list, err := List(ctx, dir)
	if err != nil || keep <= 0 || len(list) <= keep {
		return nil, err
	}
	b, prefix, err := openBucket(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	var gone []string
	for _, l := range list[:len(list)-keep] {
		if err := b.Delete(ctx, prefix+l.Name); err != nil {
			return gone, fmt.Errorf("%w: delete %s: %v", ErrLocation, l.Name, err)
		}
		gone = append(gone, l.Name)
	}
	return gone, nil
}

// CreateNamed opens a new backup named for time t in the directory location dir (the scheduler's names sort by
// time).
func CreateNamed(ctx context.Context, dir string, t time.Time) (*Sink, error) {
	return createIn(ctx, dir, "memcluster-"+t.UTC().Format("20060102T150405.000Z")+Ext)
}
