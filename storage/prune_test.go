package storage

import (
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/memory"
)

// entryAt returns a function making the entry at index from an encoder's results: entryAt(t, i)(EncodeX(…)).
func entryAt(t *testing.T, index uint64) func([]byte, error) *raft.Log {
	return func(b []byte, err error) *raft.Log {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: b}
	}
}

// requestIDs lists the request ids whose results shard holds, in key order.
func requestIDs(t *testing.T, db *DB, shard uint32) []string {
	t.Helper()
	lo := append(shardPrefix(shard), subRequest)
	it, err := db.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []string
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, string(it.Key()[len(lo):]))
	}
	return out
}

// pruneWorkload is a log of deletes with request ids of every kind, two prunes among them, and the ids a
// correct prune keeps.
func pruneWorkload(t *testing.T, now time.Time) (logs []*raft.Log, keep, gone []string) {
	ids := memory.NewIDSource()
	old1, old2, old3 := ids.New(now.Add(-3*time.Hour)), ids.New(now.Add(-2*time.Hour)), ids.New(now.Add(-90*time.Minute))
	fresh := ids.New(now.Add(-time.Minute))
	atCutoff := ids.New(now.Add(-time.Hour)) // not before the cutoff: kept
	malformed := []string{
		"req-1", // the simulator's and the tests' own ids
		strings.ToLower(ids.New(now.Add(-5 * time.Hour))), // a ULID, but not canonical
		mixedCase(ids.New(now.Add(-5 * time.Hour))),       // sorts among old ULIDs, parses, is not canonical
		"0123",                        // short, sorts among old ULIDs
		"01ARZ3NDEKTSV4RRFFQ69G5FA!",  // 26 characters, not base32
		"81ARZ3NDEKTSV4RRFFQ69G5FAV",  // overflows 48 bits of time
		"01ARZ3NDEKTSV4RRFFQ69G5FAVX", // one character too many
		"\x00\x01",                    // control characters
	}
	var reqs []string
	reqs = append(reqs, old1, old2, old3, fresh, atCutoff)
	reqs = append(reqs, malformed...)
	i := uint64(1)
	logs = append(logs, putLog(t, i, mem("u", "A", "a"), mem("u", "B", "b")))
	for _, r := range reqs {
		i++
		logs = append(logs, entryAt(t, i)(EncodeDelete(DeletePayload{UserID: "u", IDs: []string{"missing"}, RequestID: r})))
	}
	i++
	logs = append(logs, entryAt(t, i)(EncodeDeleteUser(DeleteUserPayload{UserID: "v", RequestID: ids.New(now.Add(-4 * time.Hour))})))
	gone = []string{old1, old2, old3}
	cutoff := now.Add(-time.Hour)
	i++
	logs = append(logs, entryAt(t, i)(EncodePrune(PruneBefore(cutoff, 0))))
	// A prune's retry (or the next leader's prune) finds nothing more to do.
	i++
	logs = append(logs, entryAt(t, i)(EncodePrune(PruneBefore(cutoff, 0))))
	keep = append([]string{fresh, atCutoff}, malformed...)
	slices.Sort(keep)
	return logs, keep, gone
}

// mixedCase makes the last character of a ULID (entropy) a lower-case letter, keeping its place among the
// ULIDs: it parses, but is not in canonical form.
func mixedCase(id string) string { return id[:len(id)-1] + "z" }

func TestPruneRequestResults(t *testing.T) {
	now := time.Now()
	logs, keep, gone := pruneWorkload(t, now)
	db := openMem(t, vfs.NewMem())
	defer db.Close()
	halted := false
	f, err := NewShardFSM(db, 1, nil, slog.New(slog.DiscardHandler), func(error) { halted = true })
	if err != nil {
		t.Fatal(err)
	}
	// The same request results in another shard: a prune of shard 1 must not touch them.
	other, _ := NewShardFSM(db, 2, nil, slog.New(slog.DiscardHandler), nil)
	other.ApplyBatch(logs[:len(logs)-2])
	before := requestIDs(t, db, 2)

	res := f.ApplyBatch(logs[:len(logs)-2])
	if n := len(requestIDs(t, db, 1)); n != len(keep)+len(gone)+1 {
		t.Fatalf("before the prune: %d request results, want %d", n, len(keep)+len(gone)+1)
	}
	if ok, err := db.HasPrunable(1, now.Add(-time.Hour)); !ok || err != nil {
		t.Fatalf("HasPrunable before the prune = %v, %v", ok, err)
	}
	res = f.ApplyBatch(logs[len(logs)-2:])
	if halted || f.Halted() {
		t.Fatal("a prune halted the replica")
	}
	if got := res[0].(ApplyResult); got.Err != nil || got.Deleted != len(gone)+1 {
		t.Fatalf("prune result %+v, want %d deleted (3 deletes and a forget)", got, len(gone)+1)
	}
	if got := res[1].(ApplyResult).Deleted; got != 0 {
		t.Fatalf("a second prune with the same cutoff deleted %d", got)
	}
	if got := requestIDs(t, db, 1); !slices.Equal(got, keep) {
		t.Fatalf("after the prune the shard holds\n%q\nwant\n%q", got, keep)
	}
	if ok, err := db.HasPrunable(1, now.Add(-time.Hour)); ok || err != nil {
		t.Fatalf("HasPrunable after the prune = %v, %v (only malformed and newer ids are left)", ok, err)
	}
	if got := requestIDs(t, db, 2); !slices.Equal(got, before) {
		t.Fatal("a prune of shard 1 changed shard 2's request results")
	}
	if m, err := db.GetMemory(1, "u", "A"); err != nil || m.Text != "a" {
		t.Fatalf("a prune touched a memory: %+v, %v", m, err)
	}
	if f.AppliedIndex() != logs[len(logs)-1].Index {
		t.Fatalf("applied %d, want %d", f.AppliedIndex(), logs[len(logs)-1].Index)
	}

	// Replay (raft re-delivers after a restart) changes nothing.
	f.ApplyBatch(logs)
	if got := requestIDs(t, db, 1); !slices.Equal(got, keep) {
		t.Fatalf("after a replay: %q", got)
	}

	// A result that was pruned no longer answers a retry: the retry is applied as a new request. (Retries come
	// within seconds; the retention is a day by default.)
	retry, _ := EncodeDelete(DeletePayload{UserID: "u", IDs: []string{"A"}, RequestID: gone[0]})
	if r := f.ApplyBatch([]*raft.Log{entryAt(t, f.AppliedIndex()+1)(retry, nil)}); r[0].(ApplyResult).Deleted != 1 {
		t.Fatalf("a retry of a pruned request: %+v", r[0])
	}
}

// Every replica deletes the same keys, however raft groups the entries into batches, and also when a prune
// shares a batch with the deletes it prunes.
func TestPruneDeterministicAcrossBatches(t *testing.T) {
	logs, keep, _ := pruneWorkload(t, time.Now())
	var want []string
	for _, split := range []int{1, 2, 3, len(logs) - 3, len(logs) - 1, len(logs)} {
		db := openMem(t, vfs.NewMem())
		f, _ := NewShardFSM(db, 5, nil, slog.New(slog.DiscardHandler), nil)
		for lo := 0; lo < len(logs); lo += split {
			f.ApplyBatch(logs[lo:min(lo+split, len(logs))])
		}
		got := requestIDs(t, db, 5)
		db.Close()
		if want == nil {
			want = got
		}
		if !slices.Equal(got, want) || !slices.Equal(got, keep) {
			t.Fatalf("batches of %d: %q, want %q", split, got, keep)
		}
	}
}

// Max bounds one entry's deletions, oldest first.
func TestPruneMax(t *testing.T) {
	now := time.Now()
	db := openMem(t, vfs.NewMem())
	defer db.Close()
	f, _ := NewShardFSM(db, 1, nil, slog.New(slog.DiscardHandler), nil)
	ids := memory.NewIDSource()
	var logs []*raft.Log
	var reqs []string
	for i := range 5 {
		r := ids.New(now.Add(time.Duration(i-10) * time.Minute))
		reqs = append(reqs, r)
		logs = append(logs, entryAt(t, uint64(i+1))(EncodeDelete(DeletePayload{UserID: "u", IDs: []string{"x"}, RequestID: r})))
	}
	logs = append(logs, entryAt(t, 6)(EncodePrune(PruneBefore(now, 2))))
	res := f.ApplyBatch(logs)
	if got := res[5].(ApplyResult).Deleted; got != 2 {
		t.Fatalf("deleted %d, want 2", got)
	}
	if got := requestIDs(t, db, 1); !slices.Equal(got, reqs[2:]) {
		t.Fatalf("left %q, want the three newest", got)
	}
}

func TestPruneDecode(t *testing.T) {
	b, err := EncodePrune(PrunePayload{BeforeMS: 1700000000000, Max: 10})
	if err != nil {
		t.Fatal(err)
	}
	c, err := DecodeCommand(b)
	if err != nil || c.Type != CmdPrune || c.Prune.BeforeMS != 1700000000000 || c.Prune.Max != 10 {
		t.Fatalf("round trip: %+v, %v", c, err)
	}
	if u := c.Users(); len(u) != 0 {
		t.Fatalf("a prune names users %q", u)
	}
	for _, bad := range []string{`{}`, `{"before_ms":0}`, `{"before_ms":1,"max":-1}`, `{"before_ms":281474976710656}`,
		`{"before_ms":1,"user_id":"u"}`, `[`} {
		if _, err := DecodeCommand(append([]byte{commandVersion, byte(CmdPrune)}, bad...)); !errors.Is(err, ErrUnknownCommand) {
			t.Errorf("%s: decoded (err %v)", bad, err)
		}
	}
	if _, err := EncodePrune(PrunePayload{}); err == nil {
		t.Error("encoded a prune without a cutoff")
	}
}
