package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/memcluster/memcluster/memory"
)

// DefaultWALMinSyncInterval is Options.WALMinSyncInterval's default.
const DefaultWALMinSyncInterval = time.Millisecond

// Options configures the node's DB. The zero value is valid.
type Options struct {
	// FS, when set, replaces the OS filesystem (tests use vfs.NewMem or pebble's crash-simulating FS).
	FS vfs.FS
	// CacheSize is the memory Pebble may hold table blocks in, in bytes; default 64 MiB. Pebble reserves its
	// memtables' memory from the same cache, so Open sizes the cache at CacheSize plus two memtables (the
	// mutable one and one flushing): with the cache at CacheSize alone, one 64 MiB memtable left no room for a
	// single block, and every read that missed the memtables read and decompressed its blocks again.
	CacheSize int64
	// MemTableSize is the size of one Pebble memtable; default 64 MiB (Pebble's own default is 4 MiB). Every
	// put is written twice, as a raft entry and as a record, so small memtables flush every second under load
	// and L0 compactions take a tenth of the node's CPU (docs/benchmarks.md).
	MemTableSize uint64
	// FilterBitsPerKey sizes the Bloom filter Pebble writes into every table: a point read (a record, a raft
	// entry, a fact) then skips each table above the last level that lacks its key instead of reading that
	// table's index and data blocks (Pebble does not consult filters in the last level, where most keys are
	// found). Default 10 bits per key, about 1 % false positives; negative for no filter.
	FilterBitsPerKey int
	// Logger receives Pebble's events; default slog.Default().
	Logger *slog.Logger
	// MinFreeBytes is the free-space watermark: below it WriteHealth reports the node read-only, so it stops
	// taking writes before Pebble meets ENOSPC (which it treats as fatal). Default 256 MiB; negative turns the
	// check off. Filesystems that cannot report usage (in-memory ones) always pass.
	MinFreeBytes int64
	// DiskCheckInterval is how long WriteHealth reuses a free-space reading; default 1s; negative reads it
	// on every call.
	DiskCheckInterval time.Duration
	// WriteRetryMin and WriteRetryMax bound the backoff of a state machine waiting for the disk to take a
	// failed write; defaults 10ms and 5s.
	WriteRetryMin, WriteRetryMax time.Duration
	// Restore bounds snapshot streams; see RestoreLimits for its defaults.
	Restore RestoreLimits
	// WALMinSyncInterval is the group commit's interval: while the WAL's syncs have each been covering several
	// raft entries (as counted in SyncedWrites), a sync waits this long after the last one and covers every
	// write that arrived meanwhile. Every raft group of the node appends through this one WAL, so under load
	// the groups' appends share fewer fdatasyncs, which cost CPU in the kernel as well as time; a lone writer's
	// syncs, each covering its one entry, are not held once the average has settled. Nothing is acknowledged
	// before its sync either way. Default 1ms (storage/DESIGN.md, "Group commit"); negative for none; no upper
	// bound here (memnode refuses more than 50ms).
	WALMinSyncInterval time.Duration
	// RecordCacheSize is the memory GetMemory may keep records' encoded bytes in, so that a search reads its
	// few answers at the cost of a map look-up however many records the node holds; default 32 MiB, negative
	// for none.
	RecordCacheSize int64
	// Compression is how Pebble compresses its tables' blocks: CompressLastLevel ("last-level", the default)
	// compresses with snappy the tables compactions write into the last level, where a DB's bytes come to rest,
	// and leaves uncompressed the tables flushes and the compactions above write; "none" and "snappy" apply one
	// to every level. Under 64 writing clients snappy's encoder was 4.7 % of the benchmark machine's CPU, in
	// flushes and compactions (docs/benchmarks.md, "Tables compressed only where they rest"). A table moved into
	// the last level whole (a compaction with nothing below to merge it with) keeps the compression it was
	// written with, so the last level holds some uncompressed tables too. Changing the setting leaves older
	// tables readable; compactions that rewrite them use the new one.
	Compression string
	// CompactionNicer is how many nice values below the process's priority Pebble's compactions run, each on a
	// thread of its own (Linux; elsewhere at the process's priority); 0 or negative, the default: at the process's
	// (memnode's --compaction-nice sets 10). The replicas of a shard take the same writes, so the nodes' memtables
	// fill, flush and compact at about the same moments; on shared cores the seconds in which they compacted were
	// the slow seconds of the write path (docs/benchmarks.md, "where the flush tail comes from"). Move and
	// delete-only compactions and memtable flushes keep the process's priority: a slow flush stalls writes.
	CompactionNicer int
	// OverloadSublevels is the count of level-0 sublevels at which the node holds new writes (WaitWritable)
	// until compactions bring level 0 back to two fewer; a write stall of Pebble's holds them too. Default 10,
	// two below Pebble's L0StopWritesThreshold (12), where Pebble stops every write on the node; negative: never.
	OverloadSublevels int
	// DisableAutoCompactions leaves level 0 as flushes build it: nothing compacts it, so a node reaches
	// OverloadSublevels and stays there. For tests of the overload gate; memnode never sets it.
	DisableAutoCompactions bool
}

func (o Options) withDefaults() Options {
	if o.CacheSize == 0 {
		o.CacheSize = 64 << 20
	}
	if o.RecordCacheSize == 0 {
		o.RecordCacheSize = 32 << 20
	}
	if o.MemTableSize == 0 {
		o.MemTableSize = 64 << 20
	}
	if o.OverloadSublevels == 0 {
		o.OverloadSublevels = 10
	}
	if o.WALMinSyncInterval == 0 {
		o.WALMinSyncInterval = DefaultWALMinSyncInterval
	}
	if o.FilterBitsPerKey == 0 {
		o.FilterBitsPerKey = 10
	}
	if o.Compression == "" {
		o.Compression = DefaultCompression
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.MinFreeBytes == 0 {
		o.MinFreeBytes = 256 << 20
	}
	if o.DiskCheckInterval == 0 {
		o.DiskCheckInterval = time.Second
	}
	if o.WriteRetryMin <= 0 {
		o.WriteRetryMin = 10 * time.Millisecond
	}
	if o.WriteRetryMax <= 0 {
		o.WriteRetryMax = 5 * time.Second
	}
	o.Restore = o.Restore.withDefaults()
	return o
}

// DB is a node's Pebble DB holding every shard's keyspace and raft log.
type DB struct {
	db     *pebble.DB
	log    *slog.Logger
	opts   Options
	health *diskHealth
	pacer  *syncPacer // the WAL's group commit
	// lowered counts the compactions that ran on a lowered thread (Options.CompactionNicer).
	lowered *atomic.Int64

	// closeMu orders Close after HeapBytes and DiskStats calls in flight (a background reader or a metrics
	// scrape may outlive the node's jobs); once closed, HeapBytes answers 0 and DiskStats final, its values as
	// Close found them (counters never go back).
	closeMu sync.RWMutex
	closed  bool
	final   DiskStats

	// records caches records' bytes for GetMemory; nil when Options.RecordCacheSize is negative. Every batch
	// this package commits goes through commit, which keeps it coherent.
	records *recordCache

	// stopPressure ends the watcher of health.pressure (WaitWritable) at Close; nil when there is none.
	stopPressure chan struct{}
	pressureDone chan struct{}
}

// HeapBytes is what Pebble's block cache and memtables hold on the Go heap: pointer-free buffers that stay until
// evicted or flushed, which the node's collector pacing leaves out of its headroom as it does the vectors. It is
// 0 when Pebble allocates them outside the Go heap (a build with cgo).
func (d *DB) HeapBytes() int64 {
	if !pebbleOnGoHeap {
		return 0
	}
	d.closeMu.RLock()
	defer d.closeMu.RUnlock()
	if d.closed {
		return 0
	}
	m := d.db.Metrics()
	return m.BlockCache.Size + int64(m.MemTable.Size)
}

// Open opens or creates the DB in dir and checks its key format version.
func Open(dir string, opts Options) (*DB, error) {
	opts = opts.withDefaults()
	compression, err := levelCompressions(opts.Compression)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	cache := pebble.NewCache(opts.CacheSize + 2*int64(opts.MemTableSize))
	defer cache.Unref()
	health := newDiskHealth(dir, opts)
	if opts.OverloadSublevels > 0 {
		health.pressure = newWritePressure(opts.OverloadSublevels)
	}
	po := &pebble.Options{Cache: cache, FS: opts.FS, Logger: pebbleLogger{opts.Logger},
		EventListener: health.eventListener(), MemTableSize: opts.MemTableSize}
	// Installed even with the interval off, for the sync counts in DiskStats.
	pacer := &syncPacer{interval: max(opts.WALMinSyncInterval, 0)}
	po.WALMinSyncInterval = pacer.next
	if opts.FilterBitsPerKey > 0 {
		// Tables written before keep working without one; compactions add it as they rewrite them.
		for i := range po.Levels {
			po.Levels[i].FilterPolicy = bloom.FilterPolicy(opts.FilterBitsPerKey)
		}
	}
	setCompression(po, compression)
	po.DisableAutomaticCompactions = opts.DisableAutoCompactions
	lowered := new(atomic.Int64)
	if opts.CompactionNicer > 0 {
		po.EventListener.CompactionBegin = lowerCompactions(opts.CompactionNicer, lowered, health.pressure.urgent)
	}
	pdb, err := pebble.Open(dir, po)
	if err != nil {
		return nil, fmt.Errorf("open pebble %s: %w", dir, err)
	}
	d := &DB{db: pdb, log: opts.Logger, opts: opts, health: health, pacer: pacer, lowered: lowered}
	if opts.RecordCacheSize > 0 {
		d.records = newRecordCache(opts.RecordCacheSize)
	}
	if err := d.checkFormat(); err != nil {
		pdb.Close()
		return nil, err
	}
	if health.pressure != nil {
		d.stopPressure, d.pressureDone = make(chan struct{}), make(chan struct{})
		go d.watchPressure()
	}
	return d, nil
}

func (d *DB) checkFormat() error {
	v, closer, err := d.db.Get(keyFormat)
	if errors.Is(err, pebble.ErrNotFound) {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], KeyFormatVersion)
		return d.db.Set(keyFormat, b[:], pebble.Sync)
	}
	if err != nil {
		return fmt.Errorf("read key format: %w", err)
	}
	defer closer.Close()
	if len(v) != 4 || binary.BigEndian.Uint32(v) != KeyFormatVersion {
		return fmt.Errorf("%w: %x (this binary knows %d)", ErrFormat, v, KeyFormatVersion)
	}
	return nil
}

// Pebble exposes the underlying DB for the raft log store, which shares it so that one WAL fsync covers every
// shard's appends.
func (d *DB) Pebble() *pebble.DB { return d.db }

// Close closes the DB.
func (d *DB) Close() error {
	d.closeMu.Lock()
	defer d.closeMu.Unlock()
	if d.stopPressure != nil && !d.closed {
		close(d.stopPressure)
		<-d.pressureDone
	}
	d.final = d.diskStats() // counters read after Close keep their last values
	d.closed = true
	return d.db.Close()
}

// GetNode reads a node-local value; nil when absent.
func (d *DB) GetNode(name string) ([]byte, error) {
	return d.get(NodeKey(name))
}

// SetNode durably writes a node-local value.
func (d *DB) SetNode(name string, v []byte) error {
	return d.db.Set(NodeKey(name), v, pebble.Sync)
}

// DeleteNode durably removes a node-local value (absent is not an error).
func (d *DB) DeleteNode(name string) error {
	return d.db.Delete(NodeKey(name), pebble.Sync)
}

func (d *DB) get(k []byte) ([]byte, error) {
	v, closer, err := d.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	return append([]byte(nil), v...), nil
}

// GetMemory reads one memory of user in shard.
func (d *DB) GetMemory(shard uint32, user, id string) (memory.Memory, error) {
	return d.getMemory(shard, user, id, true)
}

// GetMemoryWithoutEmbedding is GetMemory for a reader with no use for the embedding (DecodeMemoryWithoutEmbedding).
func (d *DB) GetMemoryWithoutEmbedding(shard uint32, user, id string) (memory.Memory, error) {
	return d.getMemory(shard, user, id, false)
}

func (d *DB) getMemory(shard uint32, user, id string, withEmbedding bool) (memory.Memory, error) {
	v, err := d.getRecord(MemoryKey(shard, user, id))
	if err != nil {
		return memory.Memory{}, fmt.Errorf("get memory %s: %w", id, err)
	}
	if v == nil {
		return memory.Memory{}, memory.ErrNotFound
	}
	return decodeMemory(v, withEmbedding)
}

// ScanShard calls fn for every memory of shard in key order; fn returning false stops the scan. It is for bulk
// reads: the records are decoded ahead of fn on other goroutines (scanParallel).
func (d *DB) ScanShard(shard uint32, fn func(memory.Memory) bool) error {
	lo, hi := dataRange(shard)
	return d.scanParallel(lo, hi, fn)
}

// ScanUser calls fn for every memory of user in shard, oldest first.
func (d *DB) ScanUser(shard uint32, user string, fn func(memory.Memory) bool) error {
	lo, hi := UserRange(shard, user)
	return d.scan(lo, hi, fn)
}

func (d *DB) scan(lo, hi []byte, fn func(memory.Memory) bool) error {
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		m, err := DecodeMemory(it.Value())
		if err != nil {
			return fmt.Errorf("scan %x: %w", it.Key(), err)
		}
		if !fn(m) {
			break
		}
	}
	return it.Error()
}

// Applied returns the raft index and term a shard's state reflects.
func (d *DB) Applied(shard uint32) (index, term uint64, err error) {
	v, err := d.get(appliedKey(shard))
	if err != nil || v == nil {
		return 0, 0, err
	}
	if len(v) != 16 {
		return 0, 0, fmt.Errorf("applied index of shard %d: %w", shard, ErrBadKey)
	}
	return binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:]), nil
}

// RestoreEpoch counts the snapshot restores that replaced shard's state (0: none). State derived from the records
// (the indexes) records the epoch it was built in: one of another epoch may come from records that a restore
// replaced, at an applied index a log of another history reached (a backup restored), so it is rebuilt.
func (d *DB) RestoreEpoch(shard uint32) (uint64, error) {
	v, err := d.get(epochKey(shard))
	if err != nil || v == nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("restore epoch of shard %d: %w", shard, ErrBadKey)
	}
	return binary.BigEndian.Uint64(v), nil
}

// Restoring reports whether a snapshot restore of shard was interrupted.
func (d *DB) Restoring(shard uint32) (bool, error) {
	v, err := d.get(restoreKey(shard))
	return v != nil, err
}

// DropShard removes a shard's state and raft log (the replica moved away).
func (d *DB) DropShard(shard uint32) error {
	b := d.db.NewBatch()
	defer b.Close()
	lo, hi := ShardRange(shard)
	if err := b.DeleteRange(lo, hi, nil); err != nil {
		return err
	}
	rp := RaftPrefix(shard)
	if err := b.DeleteRange(rp, prefixEnd(rp), nil); err != nil {
		return err
	}
	return d.commit(b, pebble.Sync)
}

func appliedValue(index, term uint64) []byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:], index)
	binary.BigEndian.PutUint64(b[8:], term)
	return b[:]
}

type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}
func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}
func (p pebbleLogger) Fatalf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
	panic(fmt.Sprintf(format, args...))
}

// ShardBytes estimates the disk bytes of a shard's state on this node (Pebble's estimate over its key range;
// 0 when it cannot tell).
func (d *DB) ShardBytes(shard uint32) uint64 {
	start, end := ShardRange(shard)
	n, err := d.db.EstimateDiskUsage(start, end)
	if err != nil {
		return 0
	}
	return n
}
