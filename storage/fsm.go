package storage

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/memory"
)

// ErrHalted is returned by a shard state machine that met an entry it cannot decode. It applies nothing more
// until a binary that understands the entry restarts it: skipping would let this replica diverge.
var ErrHalted = errors.New("shard replica halted")

// Indexer receives every change after it is committed to Pebble, in log order. Indexes are derived state: an
// Indexer that fails marks itself for rebuild instead of failing the apply.
type Indexer interface {
	// Index receives the changes of a batch and the raft index the shard's state now reflects.
	Index(applied uint64, puts []memory.Memory, dels []Ref)
	// Reset tells the indexer the shard's state was replaced (snapshot restore): rebuild from the DB.
	Reset()
}

// Ref names one memory.
type Ref struct {
	UserID string
	ID     string
}

// ApplyResult is what a proposer gets back from raft's ApplyFuture.Response().
type ApplyResult struct {
	Deleted int   // for deletes: how many memories existed and were removed
	Err     error // ErrHalted when the replica stopped
}

// ShardFSM is the raft.FSM of one shard. It is thin on purpose: it decodes each entry and hands it to
// applyCommand, writing the whole batch plus the applied index atomically to Pebble.
//
// Contract (hashicorp/raft): Apply/ApplyBatch, Snapshot and Restore are never called concurrently; entries come in
// log order. Entries at or below the stored applied index are skipped, which makes replay after a crash (raft
// re-delivers from the last snapshot) idempotent.
type ShardFSM struct {
	db      *DB
	shard   uint32
	idx     Indexer
	log     *slog.Logger
	onHalt  func(error)
	applied atomic.Uint64
	halted  atomic.Bool
}

// NewShardFSM returns the state machine of shard. onHalt (may be nil) is called once, from the apply goroutine,
// when an entry cannot be decoded; the caller should stop the replica.
func NewShardFSM(db *DB, shard uint32, idx Indexer, log *slog.Logger, onHalt func(error)) (*ShardFSM, error) {
	applied, _, err := db.Applied(shard)
	if err != nil {
		return nil, fmt.Errorf("open shard %d state: %w", shard, err)
	}
	f := &ShardFSM{db: db, shard: shard, idx: idx, log: log.With("shard", shard), onHalt: onHalt}
	f.applied.Store(applied)
	return f, nil
}

// AppliedIndex is the raft index the shard's state reflects.
func (f *ShardFSM) AppliedIndex() uint64 { return f.applied.Load() }

// Halted reports whether the replica stopped on an undecodable entry.
func (f *ShardFSM) Halted() bool { return f.halted.Load() }

// Apply implements raft.FSM.
func (f *ShardFSM) Apply(l *raft.Log) any { return f.ApplyBatch([]*raft.Log{l})[0] }

// ApplyBatch implements raft.BatchingFSM: one Pebble batch for the whole group of entries.
func (f *ShardFSM) ApplyBatch(logs []*raft.Log) []any {
	res := make([]any, len(logs))
	if f.halted.Load() {
		return fillHalted(res, 0)
	}
	b := f.db.db.NewIndexedBatch()
	defer b.Close()
	var ch changes
	var lastIndex, lastTerm uint64
	for i, l := range logs {
		if l.Index <= f.applied.Load() {
			res[i] = ApplyResult{}
			continue
		}
		if l.Type == raft.LogCommand {
			r, err := f.applyEntry(b, l, &ch)
			if err != nil {
				f.halt(l, err)
				f.commit(b, &ch, lastIndex, lastTerm)
				return fillHalted(res, i)
			}
			res[i] = r
		} else {
			res[i] = ApplyResult{}
		}
		lastIndex, lastTerm = l.Index, l.Term
	}
	f.commit(b, &ch, lastIndex, lastTerm)
	return res
}

func fillHalted(res []any, from int) []any {
	for i := from; i < len(res); i++ {
		res[i] = ApplyResult{Err: ErrHalted}
	}
	return res
}

func (f *ShardFSM) applyEntry(b *pebble.Batch, l *raft.Log, ch *changes) (ApplyResult, error) {
	cmd, err := DecodeCommand(l.Data)
	if err != nil {
		return ApplyResult{}, err
	}
	return applyCommand(b, f.shard, cmd, ch)
}

// commit writes the batch with the applied index. NoSync: the raft log is fsynced before entries are applied,
// and every synced raft append flushes this WAL too; a crash replays from the log.
func (f *ShardFSM) commit(b *pebble.Batch, ch *changes, index, term uint64) {
	if index == 0 {
		return
	}
	if err := b.Set(appliedKey(f.shard), appliedValue(index, term), nil); err != nil {
		panic(fmt.Sprintf("shard %d: set applied index: %v", f.shard, err))
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		// A failed local write cannot be retried later without breaking log order: stop the node loudly.
		panic(fmt.Sprintf("shard %d: commit applied batch at %d: %v", f.shard, index, err))
	}
	f.applied.Store(index)
	if f.idx != nil && (len(ch.puts) > 0 || len(ch.dels) > 0) {
		f.idx.Index(index, ch.puts, ch.dels)
	}
}

func (f *ShardFSM) halt(l *raft.Log, err error) {
	f.halted.Store(true)
	f.log.Error("replica halted on an entry it cannot decode", "index", l.Index, "term", l.Term, "err", err)
	if f.onHalt != nil {
		f.onHalt(fmt.Errorf("shard %d entry %d: %w", f.shard, l.Index, err))
	}
}

// Snapshot implements raft.FSM.
func (f *ShardFSM) Snapshot() (raft.FSMSnapshot, error) {
	if f.halted.Load() {
		return nil, ErrHalted
	}
	// Raft will compact the log up to this snapshot's index: make the applied state durable first.
	if err := f.db.db.LogData(nil, pebble.Sync); err != nil {
		return nil, fmt.Errorf("sync shard %d before snapshot: %w", f.shard, err)
	}
	index, term, err := f.db.Applied(f.shard)
	if err != nil {
		return nil, err
	}
	return &shardSnapshot{snap: f.db.db.NewSnapshot(), shard: f.shard, index: index, term: term}, nil
}

// Restore implements raft.FSM: it replaces the shard's state with the snapshot's.
func (f *ShardFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	if err := restoreShard(f.db, f.shard, rc); err != nil {
		return fmt.Errorf("restore shard %d: %w", f.shard, err)
	}
	index, _, err := f.db.Applied(f.shard)
	if err != nil {
		return err
	}
	f.applied.Store(index)
	if f.idx != nil {
		f.idx.Reset()
	}
	return nil
}
