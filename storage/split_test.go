package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/shardmap"
)

func splitLog(t *testing.T, index uint64, p SplitPayload) *raft.Log {
	t.Helper()
	b, err := EncodeSplit(p)
	if err != nil {
		t.Fatal(err)
	}
	return &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: b}
}

// A split moves every record and side record of the child's users, in the same batch as the entries around
// it, copies request results, refuses the child's users afterwards, and is a no-op when applied again.
func TestSplitMovesUpperRange(t *testing.T) {
	db := openMem(t, vfs.NewMem())
	idx := &recIndexer{}
	const parent, child, buckets = 1, 4, 4
	f, err := NewShardFSM(db, parent, idx, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	keep, give, _ := shardmap.Whole(parent).Split()
	var users []string
	for i := 0; len(users) < 40; i++ {
		if u := fmt.Sprintf("user-%03d", i); shardmap.Locate(u, buckets).Bucket == parent {
			users = append(users, u)
		}
	}
	var logs []*raft.Log
	for i, u := range users {
		txn, err := EncodeUserTxn(UserTxnPayload{UserID: u, Side: []SideKV{{Space: SpaceFacts, Key: "f1", Value: []byte(`"x"`)}},
			Puts: []memory.Memory{mem(u, fmt.Sprintf("M%03d", i), "text of "+u)}})
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, &raft.Log{Index: uint64(i + 1), Term: 1, Type: raft.LogCommand, Data: txn})
	}
	gone := slices.IndexFunc(users, func(u string) bool { return give.Contains(shardmap.Locate(u, buckets)) })
	upper := users[gone]
	del, _ := EncodeDelete(DeletePayload{UserID: upper, IDs: []string{fmt.Sprintf("M%03d", gone)}, RequestID: "req-1"})
	logs = append(logs, &raft.Log{Index: 41, Term: 1, Type: raft.LogCommand, Data: del})
	p := SplitPayload{Child: child, Buckets: buckets, Keep: keep, Give: give, Voters: []string{"n1", "n2", "n3"}}
	logs = append(logs, splitLog(t, 42, p))
	logs = append(logs, putLog(t, 43, mem(upper, "LATE", "after the split")))
	res := f.ApplyBatch(logs)
	if r := res[42].(ApplyResult); !errors.Is(r.Err, ErrWrongShard) {
		t.Fatalf("a put for a moved user after the split: %+v, want ErrWrongShard", r)
	}

	moved := 0
	for i, u := range users {
		id := fmt.Sprintf("M%03d", i)
		_, inParent := db.GetMemory(parent, u, id)
		_, inChild := db.GetMemory(child, u, id)
		side, _ := db.ReadSide(child, SpaceFacts, u, "", 0)
		owned := give.Contains(shardmap.Locate(u, buckets))
		if i == gone {
			continue // deleted before the split
		}
		if owned {
			moved++
		}
		if (inParent == nil) == owned || (inChild == nil) != owned || (len(side.Items) == 1) != owned {
			t.Fatalf("%s (child's: %v): parent %v, child %v, child side %d", u, owned, inParent, inChild, len(side.Items))
		}
		if f.Owns(u) == owned {
			t.Fatalf("%s: parent owns it = %v after the split", u, f.Owns(u))
		}
	}
	if moved == 0 || moved == len(users)-1 {
		t.Fatalf("moved %d of %d users", moved, len(users)-1)
	}
	if idx.dels != moved+1 { // and the delete before the split
		t.Fatalf("indexer told of %d deletions, want the %d moved memories", idx.dels, moved)
	}
	if ai, at, _ := db.Applied(child); ai != 1 || at != 1 {
		t.Fatalf("child applied = %d/%d, want 1/1", ai, at)
	}
	if v, _ := db.Birth(child); !slices.Equal(v, p.Voters) {
		t.Fatalf("birth voters %v", v)
	}
	if o, ok, _ := db.OwnedRange(child); !ok || o.Range != give {
		t.Fatalf("child range %v %v", o, ok)
	}
	// The request result answers alike on the child: a retried delete reports what the first one did.
	cf, err := NewShardFSM(db, child, nil, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := cf.ApplyBatch([]*raft.Log{{Index: 2, Term: 2, Type: raft.LogCommand, Data: del}})[0].(ApplyResult); r.Deleted != 1 {
		t.Fatalf("retried delete on the child: %+v", r)
	}
	// Applying the split again (the proposer retried) changes nothing; a split of another range is refused.
	if r := f.ApplyBatch([]*raft.Log{splitLog(t, 44, p)})[0].(ApplyResult); r.Err != nil {
		t.Fatalf("repeated split: %v", r.Err)
	}
	q := p
	q.Keep, q.Give, _ = give.Split()
	if r := f.ApplyBatch([]*raft.Log{splitLog(t, 45, q)})[0].(ApplyResult); !errors.Is(r.Err, ErrWrongShard) {
		t.Fatalf("split of a range the shard does not own: %+v", r)
	}
	// A restart reads the range back.
	f2, _ := NewShardFSM(db, parent, nil, slog.New(slog.DiscardHandler), nil)
	if f2.Owns(upper) {
		t.Fatal("the range was not persisted")
	}
}

// A parent replica added after a split replays the split entry from the log. Its node may already run a replica
// of the child, past index 1: the split moves the parent's users out as everywhere, and leaves the child's
// state alone.
func TestSplitReplayLeavesRunningChild(t *testing.T) {
	db := openMem(t, vfs.NewMem())
	const parent, child, buckets = 1, 4, 4
	keep, give, _ := shardmap.Whole(parent).Split()
	var upper string
	for i := 0; upper == ""; i++ {
		if u := fmt.Sprintf("u%d", i); give.Contains(shardmap.Locate(u, buckets)) {
			upper = u
		}
	}
	cf, _ := NewShardFSM(db, child, nil, slog.New(slog.DiscardHandler), nil)
	cf.ApplyBatch([]*raft.Log{putLog(t, 7, mem(upper, "LATER", "written on the child after the split"))})
	pf, _ := NewShardFSM(db, parent, nil, slog.New(slog.DiscardHandler), nil)
	var born []uint32
	pf.SetOnBorn(func(c uint32) { born = append(born, c) })
	pf.ApplyBatch([]*raft.Log{
		putLog(t, 1, mem(upper, "EARLY", "written on the parent before the split")),
		splitLog(t, 2, SplitPayload{Child: child, Buckets: buckets, Keep: keep, Give: give, Voters: []string{"n1"}}),
	})
	if _, err := db.GetMemory(parent, upper, "EARLY"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("the parent kept a moved user's memory: %v", err)
	}
	if _, err := db.GetMemory(child, upper, "LATER"); err != nil {
		t.Fatalf("the child's own write was lost: %v", err)
	}
	if _, err := db.GetMemory(child, upper, "EARLY"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("the replayed split wrote into a running child: %v", err)
	}
	if ai, _, _ := db.Applied(child); ai != 7 || len(born) != 0 {
		t.Fatalf("child applied %d, born %v: the replay must not reset it", ai, born)
	}
}

// slowIndexer takes its time over each change, as a node's index feed and split hooks do after a batch commits.
type slowIndexer struct{}

func (slowIndexer) Index(uint64, []memory.Memory, []Ref) { time.Sleep(2 * time.Millisecond) }
func (slowIndexer) Reset()                               {}

// A read of a moved user that runs while the split's batch commits either sees the user's records or is told
// to go to the child (ErrWrongShard): never "not found", which the records' move alone would make it see.
func TestReadDuringSplitNeverMissesTheUser(t *testing.T) {
	const parent, child, buckets = 1, 4, 4
	keep, give, _ := shardmap.Whole(parent).Split()
	user := ""
	for i := 0; user == ""; i++ {
		if u := fmt.Sprintf("user-%03d", i); give.Contains(shardmap.Locate(u, buckets)) {
			user = u
		}
	}
	p := SplitPayload{Child: child, Buckets: buckets, Keep: keep, Give: give, Voters: []string{"n1"}}
	wrong := 0
	for round := 0; round < 20; round++ {
		db := openMem(t, vfs.NewMem())
		f, err := NewShardFSM(db, parent, slowIndexer{}, slog.New(slog.DiscardHandler), nil)
		if err != nil {
			t.Fatal(err)
		}
		applyOK(t, f, []*raft.Log{putLog(t, 1, mem(user, "M1", "before the split"))})
		stop, done := make(chan struct{}), make(chan error, 1)
		go func() {
			for {
				err := f.ReadOwned(user, func() error { _, err := db.GetMemory(parent, user, "M1"); return err })
				switch {
				case errors.Is(err, ErrWrongShard):
					done <- err
					return
				case err != nil:
					done <- err
					return
				}
				select {
				case <-stop:
					done <- nil
					return
				default:
				}
			}
		}()
		applyOK(t, f, []*raft.Log{splitLog(t, 2, p)})
		close(stop)
		err = <-done
		if err != nil && !errors.Is(err, ErrWrongShard) {
			t.Fatalf("round %d: a read during the split: %v", round, err)
		}
		if err != nil {
			wrong++
		}
		db.Close()
	}
	t.Logf("%d of 20 rounds were sent to the child", wrong)
}
