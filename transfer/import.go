package transfer

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/memcluster/memcluster/apiv1"
)

// Writer is what an import needs of the API (client.Client has it).
type Writer interface {
	Import(ctx context.Context, user string, req apiv1.ImportRequest) (apiv1.ImportResponse, error)
}

// What an import does with a line that fails.
const (
	OnErrorStop     = "stop"     // stop there (the default); the lines before it are imported
	OnErrorContinue = "continue" // count it, name it, and go on
)

// ImportOptions configures an import. Zero fields take the defaults stated.
type ImportOptions struct {
	OnError    string // OnErrorStop (default) or OnErrorContinue
	Batch      int    // items per request, default 200, at most apiv1.MaxImport
	BatchBytes int    // bytes of lines per request, default 512 KiB (the node takes 1 MiB bodies by default)
	// MaxLineBytes bounds one line (a cold segment is one); default 16 MiB.
	MaxLineBytes int
	// Progress, when set, is called after every request.
	Progress func(Progress)
}

func (o ImportOptions) validate() (ImportOptions, error) {
	switch o.OnError {
	case "":
		o.OnError = OnErrorStop
	case OnErrorStop, OnErrorContinue:
	default:
		return o, fmt.Errorf("on-error %q: want stop or continue", o.OnError)
	}
	if o.Batch < 0 || o.Batch > apiv1.MaxImport || o.BatchBytes < 0 || o.MaxLineBytes < 0 {
		return o, fmt.Errorf("batch %d: want 1 to %d items and a positive size", o.Batch, apiv1.MaxImport)
	}
	if o.Batch == 0 {
		o.Batch = 200
	}
	if o.BatchBytes == 0 {
		o.BatchBytes = 512 << 10
	}
	if o.MaxLineBytes == 0 {
		o.MaxLineBytes = 16 << 20
	}
	if o.Progress == nil {
		o.Progress = func(Progress) {}
	}
	return o, nil
}

// item is a parsed line waiting in a batch.
type item struct {
	n    int
	line Line
}

type importer struct {
	dst     Writer
	opts    ImportOptions
	sum     *Summary
	user    string
	batch   []item
	bytes   int
	read    int64
	lastUsr string
}

// Import reads an export and writes it through dst, a batch of one user's lines per request. It returns
// ErrStopped (naming the line) when a line fails and OnError is stop; with continue the failures are in
// the summary.
func Import(ctx context.Context, dst Writer, r io.Reader, opts ImportOptions) (*Summary, error) {
	start := time.Now()
	opts, err := opts.validate()
	if err != nil {
		return nil, err
	}
	im := &importer{dst: dst, opts: opts, sum: newSummary()}
	err = im.run(ctx, r)
	im.sum.finish(start)
	return im.sum, err
}

func (im *importer) run(ctx context.Context, r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), im.opts.MaxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		b := bytes.TrimSpace(sc.Bytes())
		im.read += int64(len(sc.Bytes()) + 1)
		if n == 1 {
			if _, err := parseHeader(b); err != nil {
				return err
			}
			continue
		}
		if len(b) == 0 {
			continue
		}
		l, err := parseLine(b)
		if err != nil {
			if im.opts.OnError == OnErrorStop {
				if err := im.flush(ctx); err != nil { // the lines before it go in, as documented
					return err
				}
			}
			if err := im.failed(n, "unreadable", err); err != nil {
				return err
			}
			continue
		}
		if err := im.add(ctx, item{n: n, line: l}, len(b)); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("line %d: %w", n+1, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: the file is empty", ErrFormat)
	}
	return im.flush(ctx)
}

// add puts an item in the batch, sending the batch first when it is another user's or full.
func (im *importer) add(ctx context.Context, it item, size int) error {
	if len(im.batch) > 0 && (it.line.UserID != im.user || len(im.batch) == im.opts.Batch || im.bytes+size > im.opts.BatchBytes) {
		if err := im.flush(ctx); err != nil {
			return err
		}
	}
	if it.line.UserID != im.lastUsr {
		im.sum.Users++
		im.lastUsr = it.line.UserID
	}
	im.user = it.line.UserID
	im.batch = append(im.batch, it)
	im.bytes += size
	im.sum.Lines++
	return nil
}

// flush sends the batch. A batch the node refuses is sent again line by line, so the failing line is the
// one named and, with continue, every other line still goes in.
func (im *importer) flush(ctx context.Context) error {
	batch := im.batch
	im.batch, im.bytes = nil, 0
	if len(batch) == 0 {
		return nil
	}
	resp, err := im.dst.Import(ctx, im.user, request(batch))
	if err == nil {
		im.sum.addImport(resp)
	} else if len(batch) == 1 {
		if err := im.failed(batch[0].n, batch[0].line.Kind, err); err != nil {
			return err
		}
	} else {
		for _, it := range batch {
			im.batch = []item{it}
			if err := im.flush(ctx); err != nil {
				return err
			}
		}
	}
	im.opts.Progress(Progress{Lines: im.sum.Lines, Bytes: im.read, User: im.user})
	return nil
}

func request(batch []item) apiv1.ImportRequest {
	var req apiv1.ImportRequest
	for _, it := range batch {
		if it.line.Kind == KindMemory {
			req.Memories = append(req.Memories, *it.line.Memory)
		} else {
			req.Records = append(req.Records, it.line.record())
		}
	}
	return req
}

// failed records a failing line and says whether to stop.
func (im *importer) failed(n int, kind string, err error) error {
	im.sum.fail(n, kind, err)
	if im.opts.OnError == OnErrorStop {
		return fmt.Errorf("%w at line %d: %w", ErrStopped, n, err)
	}
	return nil
}
