package storage

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/memory"
)

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
	Err     error // ErrHalted when the replica stopped, ErrStopped when it shut down waiting for the disk
	// User transactions: Conflict when the expected revision no longer held (nothing written), and the
	// user's revision after the command.
	Conflict bool
	Rev      uint64
}

// ShardFSM is the raft.FSM of one shard. It is thin on purpose: it decodes each entry and hands it to
// applyCommand, writing the whole batch plus the applied index atomically to Pebble.
//
// Contract (hashicorp/raft): Apply/ApplyBatch, Snapshot and Restore are never called concurrently; entries come in
// log order. Entries at or below the stored applied index are skipped, which makes replay after a crash (raft
// re-delivers from the last snapshot) idempotent.
//
// An entry is never skipped: one that cannot be decoded halts the replica; a disk failure (ErrDiskIO) blocks
// the apply loop, which retries the whole batch with backoff until the disk recovers or Stop is called.
type ShardFSM struct {
	db      *DB
	shard   uint32
	idx     Indexer
	log     *slog.Logger
	onHalt  func(error)
	onBorn  func(child uint32) // a split wrote a child's first state (SetOnBorn)
	applied atomic.Uint64
	owned   atomic.Pointer[Owned] // the range after a split, as of the applied index; nil: the whole bucket
	// readable is the range reads check (ReadOwned): a split's new range is published here before its batch
	// commits, and in owned only after, since a child must not start before the batch that founds it is in.
	readable atomic.Pointer[Owned]
	lazy     bool // Snapshot returns markers (lazysnap.go)
	halted   atomic.Bool
	stopped  atomic.Bool // gave up waiting for the disk: raft thinks entries applied that are not
	stop     chan struct{}
	stopOnce sync.Once
}

// NewShardFSM returns the state machine of shard. onHalt (may be nil) is called once, from the apply goroutine,
// when an entry cannot be decoded; the caller should stop the replica.
func NewShardFSM(db *DB, shard uint32, idx Indexer, log *slog.Logger, onHalt func(error)) (*ShardFSM, error) {
	applied, _, err := db.Applied(shard)
	if err != nil {
		return nil, fmt.Errorf("open shard %d state: %w", shard, err)
	}
	f := &ShardFSM{db: db, shard: shard, idx: idx, log: log.With("shard", shard), onHalt: onHalt,
		stop: make(chan struct{})}
	f.applied.Store(applied)
	owned, err := db.loadOwned(shard)
	if err != nil {
		return nil, err
	}
	f.owned.Store(owned)
	f.readable.Store(owned)
	return f, nil
}

// Owns reports whether user belongs to this shard as of the applied index: false once a split gave the
// user's range away, and then reads must route again (ErrWrongShard).
func (f *ShardFSM) Owns(user string) bool { return f.owned.Load().Owns(user) }

// ReadOwned runs read, a read of user's records or indexes on this shard, if the shard owns user. A split
// applied while read ran may have moved the user's records out under it, so that read found nothing: read's
// result then gives way to ErrWrongShard, and the caller reads again where the user now is. This holds because
// a split publishes the shard's new range to reads before its batch moves any record (commit).
func (f *ShardFSM) ReadOwned(user string, read func() error) error {
	before := f.readable.Load()
	if !before.Owns(user) {
		return f.wrongShard(user, before)
	}
	err := read()
	if after := f.readable.Load(); after != before && !after.Owns(user) {
		return f.wrongShard(user, after)
	}
	return err
}

func (f *ShardFSM) wrongShard(user string, o *Owned) error {
	return fmt.Errorf("%w: %q is not in shard %d's range %v", ErrWrongShard, user, f.shard, o.Range)
}

// SetOnBorn registers fn, called from the apply goroutine after a split entry wrote a child shard's first
// state on this node. Call it before raft starts.
func (f *ShardFSM) SetOnBorn(fn func(child uint32)) { f.onBorn = fn }

// Owned is the range a split left the shard (nil: it never split and owns its whole bucket).
func (f *ShardFSM) Owned() *Owned { return f.owned.Load() }

// AppliedIndex is the raft index the shard's state reflects.
func (f *ShardFSM) AppliedIndex() uint64 { return f.applied.Load() }

// Halted reports whether the replica stopped on an undecodable entry.
func (f *ShardFSM) Halted() bool { return f.halted.Load() }

// Stop makes an apply that waits for the disk give up: its entries are answered ErrStopped and not applied,
// and this FSM refuses every later apply and snapshot (raft counts the entries as applied, so nothing after
// them may be). Call it before shutting the raft group down, whose Shutdown waits for the apply goroutine.
// The next start replays the entries from the raft log.
func (f *ShardFSM) Stop() { f.stopOnce.Do(func() { close(f.stop) }) }

// Apply implements raft.FSM.
func (f *ShardFSM) Apply(l *raft.Log) any { return f.ApplyBatch([]*raft.Log{l})[0] }

// ApplyBatch implements raft.BatchingFSM: one Pebble batch for the whole group of entries.
func (f *ShardFSM) ApplyBatch(logs []*raft.Log) []any {
	res := make([]any, len(logs))
	var since time.Time
	for attempt := 0; ; attempt++ {
		switch {
		case f.halted.Load():
			return fillErr(res, 0, ErrHalted)
		case f.stopped.Load():
			return fillErr(res, 0, ErrStopped)
		}
		err := f.tryApply(logs, res)
		if err == nil {
			f.diskRecovered(attempt, since)
			return res
		}
		if attempt == 0 {
			since = time.Now()
		}
		if !f.waitForDisk(attempt, err) {
			return f.giveUp(logs, res)
		}
	}
}

// giveUp answers a batch that waited for the disk until Stop: nothing applied, and nothing will be.
func (f *ShardFSM) giveUp(logs []*raft.Log, res []any) []any {
	f.stopped.Store(true)
	f.db.health.setApplyErr(f.shard, nil) // this FSM is going away; its failure must not pin read-only
	f.log.Warn("shard state machine stopped while waiting for the disk; entries left to the raft log",
		"first_index", logs[0].Index, "last_index", logs[len(logs)-1].Index)
	return fillErr(res, 0, ErrStopped)
}

// tryApply applies logs in one Pebble batch. A disk failure returns an ErrDiskIO error with nothing applied; an
// entry that cannot be applied on any replica (undecodable, or stored state corrupt) halts the replica after
// the entries before it are committed.
func (f *ShardFSM) tryApply(logs []*raft.Log, res []any) error {
	b := f.db.db.NewIndexedBatch()
	defer b.Close()
	var ch changes
	var lastIndex, lastTerm uint64
	owned := f.owned.Load() // a split inside this batch changes it for the entries after it
	for i, l := range logs {
		res[i] = ApplyResult{}
		if l.Index <= f.applied.Load() {
			continue
		}
		if l.Type == raft.LogCommand {
			r, err := f.applyEntry(b, l, &ch, &owned)
			if retryable(err) {
				return err
			}
			if err != nil {
				if cerr := f.commit(b, &ch, lastIndex, lastTerm, owned); cerr != nil {
					return cerr
				}
				f.halt(l, err)
				fillErr(res, i, ErrHalted)
				return nil
			}
			res[i] = r
		}
		lastIndex, lastTerm = l.Index, l.Term
	}
	return f.commit(b, &ch, lastIndex, lastTerm, owned)
}

// retryable reports whether err is a disk failure that may go away. Corruption does not: retrying would block
// the replica forever, so it halts instead.
func retryable(err error) bool {
	return errors.Is(err, ErrDiskIO) && !pebble.IsCorruptionError(err)
}

func fillErr(res []any, from int, err error) []any {
	for i := from; i < len(res); i++ {
		res[i] = ApplyResult{Err: err}
	}
	return res
}

// applyEntry applies one command. A command for a user outside the shard's range, or a split of a range the
// shard does not own, is answered ErrWrongShard with nothing written: the same on every replica.
func (f *ShardFSM) applyEntry(b *pebble.Batch, l *raft.Log, ch *changes, owned **Owned) (ApplyResult, error) {
	cmd, err := DecodeCommand(l.Data)
	if err != nil {
		return ApplyResult{}, err
	}
	if cmd.Type == CmdSplit {
		apply, err := splitApplies(*owned, cmd.Split)
		if err != nil || !apply {
			return ApplyResult{Err: err}, nil
		}
		keep, born, err := applySplit(b, f.shard, cmd.Split, ch)
		if err != nil {
			return ApplyResult{}, err
		}
		f.log.Info("shard split", "index", l.Index, "child", cmd.Split.Child, "keep", keep.Range, "give", cmd.Split.Give,
			"child_state_written", born)
		*owned = keep
		if born {
			ch.born = append(ch.born, cmd.Split.Child)
		}
		return ApplyResult{}, nil
	}
	for _, u := range cmd.Users() {
		if !(*owned).Owns(u) {
			return ApplyResult{Err: fmt.Errorf("%w: %q (shard %d owns %v)", ErrWrongShard, u, f.shard, (*owned).Range)}, nil
		}
	}
	return applyCommand(b, f.shard, cmd, ch)
}

// commit writes the batch with the applied index, and owned, the range after the batch's entries. NoSync: the
// raft log is fsynced before entries are applied, and every synced raft append flushes this WAL too; a crash
// replays from the log. So after a crash the state may be behind the log, never ahead of it, and never holds
// part of a batch.
func (f *ShardFSM) commit(b *pebble.Batch, ch *changes, index, term uint64, owned *Owned) error {
	if index == 0 {
		return nil
	}
	if err := b.Set(appliedKey(f.shard), appliedValue(index, term), nil); err != nil {
		return fmt.Errorf("%w: set applied index %d: %w", ErrDiskIO, index, err)
	}
	// A split's new range is published to reads before its batch moves the records, so that a read which finds
	// them gone also finds the range changed (ReadOwned); until the commit, such a read is sent to the child
	// early, and retried there until the child serves. Owned, which starts the child (cluster's awaitsSplit),
	// changes only once the batch is in.
	prev := f.readable.Swap(owned)
	// Pebble itself treats a failed WAL write as fatal (it panics); an error returned here means nothing was
	// written, so the batch can be retried as a whole.
	if err := f.db.commit(b, pebble.NoSync); err != nil {
		f.readable.Store(prev)
		return fmt.Errorf("%w: commit entries up to %d: %w", ErrDiskIO, index, err)
	}
	f.owned.Store(owned)
	f.applied.Store(index)
	if f.idx != nil && (len(ch.puts) > 0 || len(ch.dels) > 0) {
		f.idx.Index(index, ch.puts, ch.dels)
	}
	for _, c := range ch.born {
		if f.onBorn != nil {
			f.onBorn(c)
		}
	}
	return nil
}

// waitForDisk records the failure for DB.WriteHealth, logs the first one of an episode, and sleeps with
// exponential backoff. It returns false when Stop was called.
func (f *ShardFSM) waitForDisk(attempt int, err error) bool {
	f.db.health.setApplyErr(f.shard, err)
	if attempt == 0 {
		f.log.Warn("cannot write the shard's state; apply is blocked and retries until the disk recovers",
			"err", err)
	}
	d := f.db.opts.WriteRetryMin << min(attempt, 30)
	if d <= 0 || d > f.db.opts.WriteRetryMax {
		d = f.db.opts.WriteRetryMax
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-f.stop:
		return false
	}
}

func (f *ShardFSM) diskRecovered(attempts int, since time.Time) {
	if attempts == 0 {
		return
	}
	f.db.health.setApplyErr(f.shard, nil)
	f.log.Info("shard state written again after disk errors", "attempts", attempts+1,
		"blocked", time.Since(since).Round(time.Millisecond))
}

func (f *ShardFSM) halt(l *raft.Log, err error) {
	f.halted.Store(true)
	f.log.Error("replica halted on an entry it cannot apply", "index", l.Index, "term", l.Term, "err", err)
	if f.onHalt != nil {
		f.onHalt(fmt.Errorf("shard %d entry %d: %w", f.shard, l.Index, err))
	}
}

// Snapshot implements raft.FSM.
func (f *ShardFSM) Snapshot() (raft.FSMSnapshot, error) {
	switch {
	case f.halted.Load():
		return nil, ErrHalted
	case f.stopped.Load():
		return nil, ErrStopped
	}
	// Raft will compact the log up to this snapshot's index: make the applied state durable first.
	if err := f.db.db.LogData(nil, pebble.Sync); err != nil {
		return nil, fmt.Errorf("sync shard %d before snapshot: %w", f.shard, err)
	}
	index, term, err := f.db.Applied(f.shard)
	if err != nil {
		return nil, err
	}
	if f.lazy {
		return lazySnapshot{shard: f.shard, index: index, term: term}, nil
	}
	return &shardSnapshot{snap: f.db.db.NewSnapshot(), shard: f.shard, index: index, term: term}, nil
}

// Restore implements raft.FSM: it replaces the shard's state with the snapshot's.
func (f *ShardFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	r, err := refuseLazy(rc)
	if err != nil {
		return fmt.Errorf("restore shard %d: %w", f.shard, err)
	}
	if err := restoreShard(f.db, f.shard, r); err != nil {
		return fmt.Errorf("restore shard %d: %w", f.shard, err)
	}
	index, _, err := f.db.Applied(f.shard)
	if err != nil {
		return err
	}
	f.applied.Store(index)
	owned, err := f.db.loadOwned(f.shard)
	if err != nil {
		return err
	}
	f.owned.Store(owned)
	f.readable.Store(owned)
	if f.idx != nil {
		f.idx.Reset()
	}
	return nil
}
