package storage

import (
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/memory"
)

func updateLog(t *testing.T, index uint64, p UserTxnPayload) *raft.Log {
	t.Helper()
	b, err := EncodeUpdate(p)
	if err != nil {
		t.Fatal(err)
	}
	return &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: b}
}

func TestUpdateReplacesOnlyExistingMemories(t *testing.T) {
	db := openMem(t, vfs.NewMem())
	defer db.Close()
	idx := &recIndexer{}
	f, err := NewShardFSM(db, 1, idx, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	put, _ := EncodePut([]memory.Memory{mem("u", "M1", "old text")})
	del, _ := EncodeDelete(DeletePayload{UserID: "u", IDs: []string{"M1"}})
	ev := []SideKV{{Space: SpaceHistory, Key: "H1", Value: json.RawMessage(`{"op":"UPDATE"}`)}}
	res := f.ApplyBatch([]*raft.Log{
		{Index: 1, Term: 1, Type: raft.LogCommand, Data: put},
		updateLog(t, 2, UserTxnPayload{UserID: "u", ExpectRev: 0, Puts: []memory.Memory{mem("u", "M1", "new text")}, Side: ev}),
		// A second writer that read revision 0 lost the race.
		updateLog(t, 3, UserTxnPayload{UserID: "u", ExpectRev: 0, Puts: []memory.Memory{mem("u", "M1", "lost")}}),
		{Index: 4, Term: 1, Type: raft.LogCommand, Data: del},
		// Deleted since the proposer read it: the update must not bring it back.
		updateLog(t, 5, UserTxnPayload{UserID: "u", ExpectRev: 1, Puts: []memory.Memory{mem("u", "M1", "zombie")}, Side: ev}),
	})
	if r := res[1].(ApplyResult); r.Conflict || r.Rev != 1 {
		t.Fatalf("update: %+v", r)
	}
	if r := res[2].(ApplyResult); !r.Conflict {
		t.Fatalf("stale update applied: %+v", r)
	}
	if r := res[4].(ApplyResult); !r.Conflict || r.Rev != 1 {
		t.Fatalf("update of a deleted memory: %+v", r)
	}
	if _, err := db.GetMemory(1, "u", "M1"); err == nil {
		t.Fatal("an update brought a deleted memory back")
	}
	h, err := db.ReadSide(1, SpaceHistory, "u", "", 0)
	if err != nil || len(h.Items) != 1 || h.Rev != 1 {
		t.Fatalf("history = %+v, %v", h, err)
	}
	c, err := DecodeCommand(updateLog(t, 6, UserTxnPayload{UserID: "u", Puts: []memory.Memory{mem("u", "M1", "x")}}).Data)
	if err != nil || c.Type != CmdUpdate || len(c.Users()) != 2 {
		t.Fatalf("decode: %+v, %v", c, err)
	}
}
