package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// diskHealth decides whether the node should take new writes. Two signals:
//
//   - free space under the watermark (checked at most once per interval), so the node turns read-only before
//     Pebble hits ENOSPC: Pebble treats a failed WAL or MANIFEST write as fatal, so waiting for the error
//     means a crash, not a refusal;
//   - a failed write that nothing has succeeded since: a flush or compaction (Pebble retries those itself and
//     writes stall meanwhile) or a state machine batch (retried by ShardFSM).
type diskHealth struct {
	fs       vfs.FS
	dir      string
	minFree  int64
	interval time.Duration
	log      *slog.Logger

	mu        sync.Mutex
	checked   time.Time
	lowSpace  error // set by the last free-space check
	bgErr     error // failed flush or compaction, cleared by the next one that writes a table
	bgSince   time.Time
	bgLast    time.Time        // of the latest failure: Pebble retries a failing flush in a loop
	applyErrs map[uint32]error // failed state machine writes by shard, cleared by their successful retry

	stalls stallMeter
	// pressure, when set, hears of stalls as they begin and end (Options.OverloadSublevels).
	pressure *writePressure
}

// stallMeter counts Pebble's write stalls (writes held while flushes or level 0 fall behind) and their time: a
// stall holds every shard's raft appends and applies on the node at once, so it reaches every request's tail.
// Pebble reports a stall's begin and end per cause, so stalls may nest (a flush backlog while level 0 is deep):
// the time counted is while any is under way, once.
type stallMeter struct {
	mu      sync.Mutex
	depth   int       // stalls under way
	began   time.Time // when depth last left zero
	count   int64
	total   time.Duration
	lastLog time.Time
}

func (m *stallMeter) begin(reason string, log *slog.Logger) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if m.depth == 0 {
		m.began = now
	}
	m.depth++
	m.count++
	if now.Sub(m.lastLog) >= time.Minute { // a backlog stalls writes again and again: one line a minute
		m.lastLog = now
		log.Info("writes stalled until flushes or compactions catch up", "component", "pebble", "reason", reason,
			"stalls", m.count)
	}
}

// end closes one stall; an end without a begin (none is under way) is ignored.
func (m *stallMeter) end() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.depth == 0 {
		return
	}
	if m.depth--; m.depth == 0 {
		m.total += time.Since(m.began)
	}
}

// read returns the stalls so far and their time, the one under way included.
func (m *stallMeter) read() (int64, time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.total
	if m.depth > 0 {
		t += time.Since(m.began)
	}
	return m.count, t
}

// bgErrorTTL ends read-only mode after a background failure that did not recur: a flush that keeps failing
// recurs at once (Pebble retries it in a loop), but a compaction that failed once may never be picked again,
// and without writes no flush would come to clear it.
const bgErrorTTL = 30 * time.Second

func newDiskHealth(dir string, o Options) *diskHealth {
	return &diskHealth{fs: o.FS, dir: dir, minFree: o.MinFreeBytes, interval: o.DiskCheckInterval, log: o.Logger,
		applyErrs: map[uint32]error{}}
}

// WriteHealth returns nil while the node should take writes, otherwise an error wrapping ErrReadOnly that names
// the problem. Reads are unaffected either way. Cheap enough to call on every write request.
func (d *DB) WriteHealth() error {
	return d.health.check(time.Now())
}

func (h *diskHealth) check(now time.Time) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.bgErr != nil && now.Sub(h.bgLast) < bgErrorTTL {
		return readOnly(h.bgErr)
	}
	for _, err := range h.applyErrs {
		return readOnly(err)
	}
	if h.minFree < 0 {
		return nil
	}
	if h.checked.IsZero() || h.interval < 0 || now.Sub(h.checked) >= h.interval {
		h.checked = now
		h.lowSpace = h.freeSpace()
	}
	return h.lowSpace
}

// freeSpace returns ErrReadOnly when the DB's filesystem has less than the watermark free. A filesystem that
// cannot tell (in-memory ones) counts as healthy.
func (h *diskHealth) freeSpace() error {
	u, err := h.fs.GetDiskUsage(h.dir)
	if errors.Is(err, vfs.ErrUnsupported) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: cannot read free space: %v", ErrReadOnly, err)
	}
	if int64(u.AvailBytes) < h.minFree {
		return fmt.Errorf("%w: disk full: %s free of %s, below the %s watermark",
			ErrReadOnly, bytesString(u.AvailBytes), bytesString(u.TotalBytes), bytesString(uint64(h.minFree)))
	}
	return nil
}

func readOnly(err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%w: disk full: %v", ErrReadOnly, err)
	}
	return fmt.Errorf("%w: disk error: %v", ErrReadOnly, err)
}

// eventListener feeds Pebble's background write outcomes into the health state. Pebble retries a failed
// flush at once and in a loop, so the handlers only log when an episode starts or ends.
func (h *diskHealth) eventListener() *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: h.backgroundError,
		FlushEnd: func(i pebble.FlushInfo) {
			if i.Err == nil && len(i.Output) > 0 {
				h.backgroundOK()
			}
		},
		CompactionEnd: func(i pebble.CompactionInfo) {
			if i.Err == nil && len(i.Output.Tables) > 0 {
				h.backgroundOK()
			}
		},
		WriteStallBegin: func(i pebble.WriteStallBeginInfo) {
			h.stalls.begin(i.Reason, h.log)
			if h.pressure != nil {
				h.pressure.stall(+1)
			}
		},
		WriteStallEnd: func() {
			h.stalls.end()
			if h.pressure != nil {
				h.pressure.stall(-1)
			}
		},
	}
}

func (h *diskHealth) backgroundError(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	if h.bgErr == nil || now.Sub(h.bgLast) >= bgErrorTTL {
		h.bgSince = now
		h.log.Warn("disk write failed in the background; node is read-only until one succeeds",
			"component", "pebble", "err", err)
	}
	h.bgErr, h.bgLast = err, now
}

func (h *diskHealth) backgroundOK() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.bgErr != nil {
		h.log.Info("disk takes background writes again", "component", "pebble",
			"after", time.Since(h.bgSince).Round(time.Millisecond))
		h.bgErr = nil
	}
}

// setApplyErr records (err != nil) or clears a shard's state machine write failure; ShardFSM logs the episode.
func (h *diskHealth) setApplyErr(shard uint32, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		delete(h.applyErrs, shard)
		return
	}
	h.applyErrs[shard] = err
}

func bytesString(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
