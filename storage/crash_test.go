package storage

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"
	"github.com/oklog/ulid/v2"

	"github.com/memcluster/memcluster/memory"
)

// Crash tests on Pebble's crash-simulating in-memory filesystem: vfs.NewCrashableMem keeps what was synced and,
// in a CrashClone, a random part of what was not (whole 4 KiB blocks, so records can be torn mid-write).
//
// What a crash may do to a shard, by design: ShardFSM commits with NoSync and relies on the raft log for
// durability. The raft log lives in the same Pebble DB and every append is fsynced, which also makes every
// earlier NoSync batch durable. So after a crash the shard's state may be behind the raft log — never ahead of
// it, never behind the last fsync, and never torn: it is exactly the state a run without crash had at the
// applied index, and replaying the log from there reaches the same state as a run without crash.
//
// The seed fixes the workload, the crash points and the crash clones' choices; it is printed on failure and
// STORAGE_CRASH_SEED=<seed> replays it. Pebble's WAL flusher runs on its own goroutine, so which unsynced bytes
// had reached the file at a crash point can differ between replays; the checked properties hold for all.

const crashShard = 7

func crashSeeds(t *testing.T) []int64 {
	if s := os.Getenv("STORAGE_CRASH_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("STORAGE_CRASH_SEED=%q: %v", s, err)
		}
		return []int64{v}
	}
	return []int64{1, 2, time.Now().UnixNano()}
}

func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

func openCrashDB(t *testing.T, fs vfs.FS) *DB {
	t.Helper()
	db, err := Open("db", Options{FS: fs, Logger: quietLog(), MinFreeBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// crashWorkload returns raft entries from index 1 in batches as raft would hand them to ApplyBatch: puts that
// overwrite, deletes (some retried with the same request id), user deletions, embedding updates, prunes of request
// results and no-ops.
func crashWorkload(rng *rand.Rand, batches int) [][]*raft.Log {
	var out [][]*raft.Log
	index, term := uint64(0), uint64(1)
	for range batches {
		var b []*raft.Log
		for range 1 + rng.IntN(8) {
			index++
			if rng.IntN(20) == 0 {
				term++
			}
			b = append(b, crashEntry(rng, index, term))
		}
		out = append(out, b)
	}
	return out
}

func crashEntry(rng *rand.Rand, index, term uint64) *raft.Log {
	user := fmt.Sprintf("u%d", rng.IntN(5))
	id := func() string { return fmt.Sprintf("01J%04d", rng.IntN(30)) }
	reqID := crashRequestID(rng.IntN(int(index) + 1)) // sometimes an earlier request, retried
	var data []byte
	var err error
	switch k := rng.IntN(20); {
	case k < 11:
		ms := make([]memory.Memory, 1+rng.IntN(4))
		for i := range ms {
			ms[i] = randomMemory(rng, user, id())
		}
		data, err = EncodePut(ms)
	case k < 14:
		data, err = EncodeDelete(DeletePayload{UserID: user, IDs: []string{id(), id()}, RequestID: reqID})
	case k < 15:
		data, err = EncodeDeleteUser(DeleteUserPayload{UserID: user, RequestID: reqID})
	case k < 18:
		data, err = EncodeSetEmbeddings(SetEmbeddingsPayload{Items: []EmbeddingUpdate{
			{UserID: user, ID: id(), Model: "m2", Vector: randomVector(rng)}}})
	case k < 19:
		// Prunes the results of requests made before a random earlier one (ids of the other form stay).
		data, err = EncodePrune(PrunePayload{BeforeMS: crashRequestBase + uint64(rng.IntN(int(index)+1))*1000,
			Max: rng.IntN(4)})
	default:
		return &raft.Log{Index: index, Term: term, Type: raft.LogNoop}
	}
	if err != nil {
		panic(err)
	}
	return &raft.Log{Index: index, Term: term, Type: raft.LogCommand, Data: data}
}

// crashRequestBase is the time (Unix ms) of request 0's id.
const crashRequestBase = 1700000000000

// crashRequestID is the id of the workload's request n: a ULID made n seconds after crashRequestBase for even
// n, which prunes delete once past it, and a non-ULID id, which they never delete, for odd n.
func crashRequestID(n int) string {
	if n%2 == 1 {
		return fmt.Sprintf("req-%d", n)
	}
	var u ulid.ULID
	_ = u.SetTime(crashRequestBase + uint64(n)*1000)
	_ = u.SetEntropy(binary.BigEndian.AppendUint64(make([]byte, 2), uint64(n)))
	return u.String()
}

func randomMemory(rng *rand.Rand, user, id string) memory.Memory {
	text := make([]byte, rng.IntN(3000))
	for i := range text {
		text[i] = 'a' + byte(rng.IntN(26))
	}
	m := mem(user, id, string(text))
	m.Embedding = randomVector(rng)
	return m
}

func randomVector(rng *rand.Rand) []float32 {
	v := make([]float32, 32)
	for i := range v {
		v[i] = rng.Float32()
	}
	return v
}

// shardState lists "key=sha256(value)" of every key in a shard's keyspace (records, request results, the
// applied index, the restore marker), in key order.
func shardState(t *testing.T, db *DB, shard uint32) []string {
	t.Helper()
	lo, hi := ShardRange(shard)
	it, err := db.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []string
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, fmt.Sprintf("%x=%x", it.Key(), sha256.Sum256(it.Value())))
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return out
}

// stateDiff names the first difference between two shard states, for failure messages.
func stateDiff(got, want []string) string {
	g := map[string]bool{}
	for _, s := range got {
		g[s] = true
	}
	w := map[string]bool{}
	for _, s := range want {
		w[s] = true
		if !g[s] {
			return "missing or changed " + s
		}
	}
	for _, s := range got {
		if !w[s] {
			return "unexpected " + s
		}
	}
	return "equal"
}

// referenceStates applies the batches without crash and records the shard's state after each one, by applied
// index (0: before the first).
func referenceStates(t *testing.T, batches [][]*raft.Log) map[uint64][]string {
	t.Helper()
	db := openCrashDB(t, vfs.NewMem())
	defer db.Close()
	f, _ := NewShardFSM(db, crashShard, nil, quietLog(), nil)
	ref := map[uint64][]string{0: shardState(t, db, crashShard)}
	for _, b := range batches {
		applyOK(t, f, b)
		ref[b[len(b)-1].Index] = shardState(t, db, crashShard)
	}
	return ref
}

func applyOK(t *testing.T, f *ShardFSM, logs []*raft.Log) {
	t.Helper()
	for i, r := range f.ApplyBatch(logs) {
		if err := r.(ApplyResult).Err; err != nil {
			t.Fatalf("entry %d: %v", logs[i].Index, err)
		}
	}
}

// The test's raft log: entries in the shard's raft keyspace, each append fsynced, as raftstore does.
func logKey(shard uint32, index uint64) []byte {
	return binary.BigEndian.AppendUint64(append(RaftPrefix(shard), 'L'), index)
}

func appendLog(t *testing.T, db *DB, logs []*raft.Log) {
	t.Helper()
	b := db.db.NewBatch()
	defer b.Close()
	for _, l := range logs {
		v := binary.BigEndian.AppendUint64(nil, l.Term)
		v = append(v, byte(l.Type))
		_ = b.Set(logKey(crashShard, l.Index), append(v, l.Data...), nil)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
}

func readLog(t *testing.T, db *DB) []*raft.Log {
	t.Helper()
	p := append(RaftPrefix(crashShard), 'L')
	it, err := db.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []*raft.Log
	for ok := it.First(); ok; ok = it.Next() {
		k, v := it.Key(), it.Value()
		out = append(out, &raft.Log{Index: binary.BigEndian.Uint64(k[len(p):]), Term: binary.BigEndian.Uint64(v),
			Type: raft.LogType(v[8]), Data: append([]byte(nil), v[9:]...)})
	}
	return out
}

// crashRun is what the run without crash knew when a crash clone was taken.
type crashRun struct {
	seed           int64
	applied        uint64 // the FSM's applied index
	durableApplied uint64 // its applied index at the last fsync (raft append or snapshot)
	durableLog     uint64 // last raft entry appended (appends are fsynced)
}

func TestCrashDuringApply(t *testing.T) {
	for _, seed := range crashSeeds(t) {
		t.Run(strconv.FormatInt(seed, 10), func(t *testing.T) { crashDuringApply(t, seed) })
	}
}

func crashDuringApply(t *testing.T, seed int64) {
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	batches := crashWorkload(rng, 50)
	ref := referenceStates(t, batches)
	fs := vfs.NewCrashableMem()
	db := openCrashDB(t, fs)
	defer db.Close()
	f, _ := NewShardFSM(db, crashShard, nil, quietLog(), nil)
	run := crashRun{seed: seed}
	crashes := 0
	maybeCrash := func() {
		if rng.IntN(6) == 0 {
			crashes++
			clone := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(101), RNG: rng})
			checkCrash(t, clone, run, ref, rng)
		}
	}
	for _, b := range batches {
		maybeCrash()
		appendLog(t, db, b)
		run.durableApplied, run.durableLog = run.applied, b[len(b)-1].Index
		maybeCrash()
		applyOK(t, f, b)
		run.applied = f.AppliedIndex()
		maybeCrash()
		switch rng.IntN(10) {
		case 0: // a flush: sstables, a new WAL, a MANIFEST edit
			if err := db.Pebble().Flush(); err != nil {
				t.Fatal(err)
			}
		case 1: // a snapshot fsyncs the applied state first
			snap, err := f.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			snap.Release()
			run.durableApplied = run.applied
		}
	}
	t.Logf("seed %d: %d crash points checked", seed, crashes)
}

// checkCrash opens the DB on a crash clone and checks the shard against the run without crash.
func checkCrash(t *testing.T, clone vfs.FS, run crashRun, ref map[uint64][]string, rng *rand.Rand) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d (replay: STORAGE_CRASH_SEED=%d go test -run TestCrash ./storage/): %s",
			run.seed, run.seed, fmt.Sprintf(format, args...))
	}
	db, err := Open("db", Options{FS: clone, Logger: quietLog(), MinFreeBytes: -1})
	if err != nil {
		fail("DB does not open after the crash: %v", err)
	}
	defer db.Close()
	applied, _, err := db.Applied(crashShard)
	if err != nil {
		fail("read applied index: %v", err)
	}
	if applied < run.durableApplied || applied > run.applied {
		fail("applied index %d after the crash; want it in [%d, %d]: never behind the last fsync, never ahead",
			applied, run.durableApplied, run.applied)
	}
	want, ok := ref[applied]
	if !ok {
		fail("applied index %d is inside a batch: a torn batch", applied)
	}
	if got := shardState(t, db, crashShard); stateDiff(got, want) != "equal" {
		fail("state at applied index %d differs from the run without crash: %s", applied, stateDiff(got, want))
	}
	log := readLog(t, db)
	last := uint64(len(log))
	if last < run.durableLog || last < applied || (last > 0 && log[last-1].Index != last) {
		fail("raft log has %d entries, not contiguous from 1 or short: fsynced up to %d, applied %d",
			last, run.durableLog, applied)
	}
	// Raft re-delivers from its last snapshot: entries up to the applied index change nothing, the rest
	// bring the shard to the state of the run without crash.
	f, _ := NewShardFSM(db, crashShard, nil, quietLog(), nil)
	replayRandomly(t, f, log[:applied], rng)
	if got := shardState(t, db, crashShard); stateDiff(got, want) != "equal" {
		fail("re-applying entries up to %d changed the state: %s", applied, stateDiff(got, want))
	}
	replayRandomly(t, f, log[applied:], rng)
	if want, ok := ref[last]; !ok {
		fail("raft log ends inside a batch at %d", last)
	} else if got := shardState(t, db, crashShard); stateDiff(got, want) != "equal" {
		fail("after replaying %d..%d the state differs from the run without crash: %s",
			applied+1, last, stateDiff(got, want))
	}
}

// replayRandomly applies logs in batches of random sizes: the result must not depend on how raft groups them.
func replayRandomly(t *testing.T, f *ShardFSM, logs []*raft.Log, rng *rand.Rand) {
	t.Helper()
	for len(logs) > 0 {
		n := min(len(logs), 1+rng.IntN(10))
		applyOK(t, f, logs[:n])
		logs = logs[n:]
	}
}

func TestCrashDuringRestore(t *testing.T) {
	for _, seed := range crashSeeds(t) {
		t.Run(strconv.FormatInt(seed, 10), func(t *testing.T) { crashDuringRestore(t, seed) })
	}
}

// A crash in the middle of a snapshot restore leaves the marker (written with Sync before anything is
// deleted); restoring again from the marker's state gives exactly the state of a restore without crash.
// A crash while the restore still reads the stream's first bytes (to refuse a lazy marker) comes before the
// marker: then nothing of the old state may be gone or changed and no marker may be there, and restoring again
// must still give the restore's state.
func crashDuringRestore(t *testing.T, seed int64) {
	rng := rand.New(rand.NewPCG(uint64(seed), 2))
	snapshot, index := bigSnapshot(t, rng)
	ref := restoredState(t, snapshot)
	for i := range 3 {
		fs := vfs.NewCrashableMem()
		db := openCrashDB(t, fs)
		f, _ := NewShardFSM(db, crashShard, nil, quietLog(), nil)
		replayRandomly(t, f, crashWorkload(rng, 3)[0], rng)     // state the restore replaces
		if err := db.db.LogData(nil, pebble.Sync); err != nil { // durable, so a crash before the marker keeps it all
			t.Fatal(err)
		}
		old := shardState(t, db, crashShard)
		var clone *vfs.MemFS
		var marked bool
		// At 0 the reader would never call crash. The first crash comes within the first 4 KiB, which the
		// restore reads before its marker (refuseLazy's buffer), so each seed checks that case too.
		span := int64(len(snapshot)) - 1
		if i == 0 {
			span = min(span, 4096)
		}
		at := 1 + rng.Int64N(span)
		r := &crashingReader{r: bytes.NewReader(snapshot), at: at, crash: func() {
			var err error
			if marked, err = db.Restoring(crashShard); err != nil {
				t.Errorf("read the restore marker at the crash: %v", err)
			}
			clone = fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(101), RNG: rng})
		}}
		if err := f.Restore(io.NopCloser(r)); err != nil {
			t.Fatal(err)
		}
		db.Close()
		checkRestoreCrash(t, seed, at, marked, clone, snapshot, index, ref, old)
	}
}

// checkRestoreCrash checks the DB a crash after at bytes of the snapshot left: with the restore marker if it was
// on disk at the crash (marked), else with the old state intact; a redone restore gives ref either way.
func checkRestoreCrash(t *testing.T, seed, at int64, marked bool, clone vfs.FS, snapshot []byte, index uint64, ref, old []string) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d, crash after %d snapshot bytes (replay: STORAGE_CRASH_SEED=%d go test -run TestCrash ./storage/): %s",
			seed, at, seed, fmt.Sprintf(format, args...))
	}
	db, err := Open("db", Options{FS: clone, Logger: quietLog(), MinFreeBytes: -1})
	if err != nil {
		fail("DB does not open after the crash: %v", err)
	}
	defer db.Close()
	restoring, err := db.Restoring(crashShard)
	switch {
	case err != nil:
		fail("read the restore marker: %v", err)
	case marked && !restoring:
		fail("restore marker missing after a crash mid-restore: the partial state would be served")
	case !marked && restoring:
		fail("a restore marker the crash came before")
	case !marked:
		if got := shardState(t, db, crashShard); stateDiff(got, old) != "equal" {
			fail("a crash before the restore marker changed the old state: %s", stateDiff(got, old))
		}
	}
	f, _ := NewShardFSM(db, crashShard, nil, quietLog(), nil)
	if err := f.Restore(io.NopCloser(bytes.NewReader(snapshot))); err != nil {
		fail("redo restore: %v", err)
	}
	if got := shardState(t, db, crashShard); stateDiff(got, ref) != "equal" {
		fail("state after the redone restore differs from a restore without crash: %s", stateDiff(got, ref))
	}
	if f.AppliedIndex() != index {
		fail("applied index %d after the redone restore, want %d", f.AppliedIndex(), index)
	}
}

// bigSnapshot returns a snapshot whose decoded stream spans several restore batches, and its applied index.
func bigSnapshot(t *testing.T, rng *rand.Rand) ([]byte, uint64) {
	t.Helper()
	db := openCrashDB(t, vfs.NewMem())
	defer db.Close()
	f, _ := NewShardFSM(db, 1, nil, quietLog(), nil)
	var logs []*raft.Log
	for i := range 3000 {
		m := randomMemory(rng, fmt.Sprintf("u%d", i%50), fmt.Sprintf("01K%05d", i))
		m.Text = strings.Repeat(m.Text+" ", 1+3000/(len(m.Text)+1))[:3000]
		logs = append(logs, putLog(t, uint64(i+1), m))
	}
	applyOK(t, f, logs)
	return persisted(t, f).Bytes(), f.AppliedIndex()
}

func restoredState(t *testing.T, snapshot []byte) []string {
	t.Helper()
	db := openCrashDB(t, vfs.NewMem())
	defer db.Close()
	f, _ := NewShardFSM(db, crashShard, nil, quietLog(), nil)
	if err := f.Restore(io.NopCloser(bytes.NewReader(snapshot))); err != nil {
		t.Fatal(err)
	}
	return shardState(t, db, crashShard)
}

// crashingReader calls crash once, when the reader has handed out at bytes.
type crashingReader struct {
	r     io.Reader
	n, at int64
	crash func()
}

func (c *crashingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.n < c.at && c.n+int64(n) >= c.at {
		c.crash()
	}
	c.n += int64(n)
	return n, err
}
