package fulltext

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
)

// Internal keys. Owner markers live under their own prefix so they can never collide with
// bleve's internal keys ("_mapping") or with ours.
const (
	versionKey   = "fulltext/mapping_version"
	markerPrefix = "fulltext/marker/"
	metaFile     = "index_meta.json" // written by bleve in every on-disk index
)

// Index is one shard's full-text index. Safe for concurrent use.
type Index struct {
	b        bleve.Index
	opts     Options
	analyzer analysis.Analyzer // Options.Analyzer: the words of texts and queries, before scoping
	settle   *settler          // nil when the index does not settle (in memory, or SettleAfter off)
	dense    denseBuffers      // score arrays of dense queries (dense.go)
	users    *userPostings     // users' documents per segment, between searches (userdocs.go)
	decoded  *termLists        // long posting lists decoded, between dense searches (termcache.go)
	closed   atomic.Bool       // Close has begun: a second one returns ErrClosed (scorch's own would panic)
}

// Open opens the index in dir, creating it if dir is missing or empty. It returns ErrOutdated if
// the index was built with another MappingVersion or analyzer.
func Open(dir string, opts Options) (*Index, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	m, err := buildMapping(opts.Analyzer)
	if err != nil {
		return nil, fmt.Errorf("fulltext: mapping: %w", err)
	}
	if opts.InMemory {
		// Scorch without a path, not bleve.NewMemOnly: that is upsidedown, which has no BM25.
		b, err := bleve.NewUsing("", m, scorch.Name, scorch.Name, nil)
		if err != nil {
			return nil, fmt.Errorf("fulltext: create in memory: %w", err)
		}
		return create(b, m, opts)
	}
	if dir == "" {
		return nil, fmt.Errorf("%w: empty dir", ErrInvalid)
	}
	if _, err := os.Stat(filepath.Join(dir, metaFile)); errors.Is(err, os.ErrNotExist) {
		b, err := bleve.NewUsing(dir, m, scorch.Name, scorch.Name, storeConfig(opts))
		if err != nil {
			return nil, fmt.Errorf("fulltext: create %s: %w", dir, err)
		}
		return create(b, m, opts)
	}
	// bleve writes a new index's metadata file first and its mapping later, asynchronously: a process killed
	// in between (seen in chaos runs) leaves an index that cannot be opened. It is reported as ErrDamaged, and
	// the owner rebuilds it. (Creating aside and renaming into place does not help: scorch persists the
	// mapping after Close returns, so a renamed fresh index can lack it.)
	b, err := bleve.OpenUsing(dir, storeConfig(opts))
	if err != nil {
		return nil, fmt.Errorf("%w: open %s: %v", ErrDamaged, dir, err)
	}
	if err := checkVersion(b, m); err != nil {
		_ = b.Close()
		return nil, err
	}
	return newIndex(b, m, opts)
}

func newIndex(b bleve.Index, m mapping.IndexMapping, opts Options) (*Index, error) {
	a := m.AnalyzerNamed(opts.Analyzer)
	if a == nil {
		_ = b.Close()
		return nil, fmt.Errorf("%w: no analyzer %q", ErrInvalid, opts.Analyzer)
	}
	ix := &Index{b: b, opts: opts, analyzer: a, users: newUserPostings(opts.UserPostingsCache, &opts.Meter.UserPostings),
		decoded: newTermLists(opts.DecodedPostingsCache, opts.DecodedPostingsMin, &opts.Meter.DecodedPostings)}
	ix.startSettler()
	return ix, nil
}

// storeMaxSegmentSize bounds a merged segment's live documents.
const storeMaxSegmentSize = 5_000_000

// storeConfig is the scorch runtime config. It is given on every open because bleve's OpenUsing
// runtime config overrides what was persisted at creation.
//
// The persister nap lets scorch gather the small in-memory segments of many tiny batches and merge them in
// memory before writing one file; without it every raft batch became a file and the merger used most of a
// core re-merging them (measured: 63% of CPU under a 64-client write load).
func storeConfig(opts Options) map[string]interface{} {
	cfg := map[string]interface{}{
		"unsafe_batch": opts.NoSync,
		"scorchPersisterOptions": map[string]interface{}{
			"PersisterNapTimeMSec":      int(opts.PersisterNap / time.Millisecond),
			"PersisterNapUnderNumFiles": 1000,
		},
		// More small segments per tier before merging: fewer, larger merges.
		"scorchMergePlanOptions": map[string]interface{}{
			"MaxSegmentsPerTier":   opts.MaxSegmentsPerTier,
			"SegmentsPerMergeTask": opts.MaxSegmentsPerTier,
			"FloorSegmentSize":     int64(64),
			"TierGrowth":           10.0,
			"MaxSegmentSize":       int64(storeMaxSegmentSize),
			"ReclaimDeletesWeight": 2.0,
		},
	}
	if opts.eventCallback != "" {
		cfg["eventCallbackName"] = opts.eventCallback
	}
	return cfg
}

func create(b bleve.Index, m mapping.IndexMapping, opts Options) (*Index, error) {
	if err := b.SetInternal([]byte(versionKey), []byte(MappingVersion)); err != nil {
		_ = b.Close()
		return nil, fmt.Errorf("fulltext: write mapping version: %w", err)
	}
	return newIndex(b, m, opts)
}

// checkVersion compares both the version marker and the mapping itself, so an analyzer change
// or a forgotten MappingVersion bump is caught too.
func checkVersion(b bleve.Index, want mapping.IndexMapping) error {
	v, err := b.GetInternal([]byte(versionKey))
	if err != nil {
		return fmt.Errorf("fulltext: read mapping version: %w", err)
	}
	if string(v) != MappingVersion {
		return fmt.Errorf("%w: version %q, want %q", ErrOutdated, v, MappingVersion)
	}
	have, err := json.Marshal(b.Mapping())
	if err != nil {
		return fmt.Errorf("fulltext: encode stored mapping: %w", err)
	}
	cur, err := json.Marshal(want)
	if err != nil {
		return fmt.Errorf("fulltext: encode mapping: %w", err)
	}
	if !bytes.Equal(have, cur) {
		return fmt.Errorf("%w: stored mapping differs (analyzer changed?)", ErrOutdated)
	}
	return nil
}

// SetMarker durably stores val under key (for example the applied raft index). To move a marker
// atomically with documents, use ApplyWithMarkers.
func (ix *Index) SetMarker(key string, val []byte) error {
	if key == "" {
		return fmt.Errorf("%w: empty marker key", ErrInvalid)
	}
	if err := ix.b.SetInternal([]byte(markerPrefix+key), val); err != nil {
		return wrap("set marker", err)
	}
	return nil
}

// Marker returns the value stored under key, or nil if it was never set.
func (ix *Index) Marker(key string) ([]byte, error) {
	if key == "" {
		return nil, fmt.Errorf("%w: empty marker key", ErrInvalid)
	}
	v, err := ix.b.GetInternal([]byte(markerPrefix + key))
	if err != nil {
		return nil, wrap("get marker", err)
	}
	return v, nil
}

// DocCount returns the number of documents in the index, over all users.
func (ix *Index) DocCount() (uint64, error) {
	n, err := ix.b.DocCount()
	if err != nil {
		return 0, wrap("doc count", err)
	}
	return n, nil
}

// Close closes the index; on disk, everything applied is persisted first. With NoSync it waits for scorch's
// persister (at most closePersistWait): scorch's own Close stops the persister without writing what it had not
// written yet, so every restart re-fed the last nap's worth of batches, or a new index lost its mapping.
func (ix *Index) Close() error {
	if !ix.closed.CompareAndSwap(false, true) {
		return fmt.Errorf("fulltext: close: %w", ErrClosed)
	}
	// A settle under way ends: its merge is cancelled, and its wait for scorch ends with the index's close
	// (scorch answers a forced merge only between its own merges, so waiting for the settler first could wait
	// for a normal merge, or forever behind one that keeps failing).
	ix.settle.cancel()
	ix.WaitPersisted()
	err := ix.b.Close()
	ix.settle.wait()
	ix.users.close() // their bytes leave the Meter with the index
	ix.decoded.close()
	if err != nil {
		return wrap("close", err)
	}
	return nil
}

// Destroy removes the index in dir (for a rebuild). A missing dir is not an error; a directory
// that holds files but no bleve index is refused with ErrNotIndex.
func Destroy(dir string) error {
	if dir == "" {
		return fmt.Errorf("%w: empty dir", ErrInvalid)
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("fulltext: destroy %s: %w", dir, err)
	}
	if len(entries) > 0 {
		if _, err := os.Stat(filepath.Join(dir, metaFile)); err != nil {
			return fmt.Errorf("%w: %s", ErrNotIndex, dir)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("fulltext: destroy %s: %w", dir, err)
	}
	return nil
}

// wrap names the failed operation and maps bleve's closed-index error onto ErrClosed.
func wrap(op string, err error) error {
	if errors.Is(err, bleve.ErrorIndexClosed) {
		return fmt.Errorf("fulltext: %s: %w", op, ErrClosed)
	}
	return fmt.Errorf("fulltext: %s: %w", op, err)
}

// closePersistWait bounds how long Close waits for scorch to persist what was applied with NoSync.
const closePersistWait = 30 * time.Second

// WaitPersisted returns once scorch has persisted every batch applied before the call (at most closePersistWait;
// at once for an in-memory or synced index). Close uses it; a benchmark can, so scorch's persisting does not
// compete with what it times.
func (ix *Index) WaitPersisted() { ix.waitPersisted(context.Background()) }

// waitPersisted is WaitPersisted, which also ends when ctx does.
func (ix *Index) waitPersisted(ctx context.Context) {
	if ix.opts.InMemory || !ix.opts.NoSync {
		return
	}
	sc := ix.scorch()
	if sc == nil {
		return
	}
	st, ok := sc.Stats().(*scorch.Stats)
	if !ok {
		return
	}
	want := atomic.LoadUint64(&st.CurRootEpoch)
	deadline := time.Now().Add(closePersistWait)
	for atomic.LoadUint64(&st.LastPersistedEpoch) < want && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
}

// WaitIdle returns once scorch has persisted everything and its root stayed unchanged for five polls 200 ms
// apart (no merge introduced meanwhile), or when ctx ends. A benchmark calls it so that background merging
// does not compete with what it times.
func (ix *Index) WaitIdle(ctx context.Context) error {
	var last string
	for quiet := 0; quiet < 5; {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		s := ix.stats()
		cur := fmt.Sprint(s["CurRootEpoch"], s["num_recs_to_persist"], s["num_root_filesegments"], s["num_root_memorysegments"])
		if cur == last && fmt.Sprint(s["num_recs_to_persist"]) == "0" {
			quiet++
		} else {
			quiet = 0
		}
		last = cur
	}
	return nil
}

// Segments is how many segments scorch's current root holds (a search looks up each term in every one).
func (ix *Index) Segments() (files, inMemory uint64) {
	s := ix.stats()
	files, _ = s["num_root_filesegments"].(uint64)
	inMemory, _ = s["num_root_memorysegments"].(uint64)
	return files, inMemory
}

// scorch is the index's scorch engine (nil if bleve is closed or runs another one).
func (ix *Index) scorch() *scorch.Scorch {
	adv, err := ix.b.Advanced()
	if err != nil {
		return nil
	}
	sc, _ := adv.(*scorch.Scorch)
	return sc
}

// stats is scorch's statistics map (nil entries when there are none).
func (ix *Index) stats() map[string]any {
	s, _ := ix.b.StatsMap()["index"].(map[string]any)
	return s
}
