package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/memory"
)

// commandFormats is every raft command format this build writes, for tests that hold in each.
var commandFormats = []CommandFormat{CommandJSON, CommandBinary}

func txnLog(t *testing.T, f CommandFormat, index uint64, p UserTxnPayload) *raft.Log {
	t.Helper()
	b, err := Encoder{Commands: f}.UserTxn(p)
	if err != nil {
		t.Fatal(err)
	}
	return &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: b}
}

func TestUserTxnRevisionGuardsEveryWrite(t *testing.T) {
	for _, cf := range commandFormats {
		t.Run(fmt.Sprint("format ", cf), func(t *testing.T) { testUserTxnRevisionGuardsEveryWrite(t, cf) })
	}
}

func testUserTxnRevisionGuardsEveryWrite(t *testing.T, cf CommandFormat) {
	db := openMem(t, vfs.NewMem())
	defer db.Close()
	f, err := NewShardFSM(db, 1, &recIndexer{}, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	fact := json.RawMessage(`{"statement":"user lives in Paris"}`)
	res := f.ApplyBatch([]*raft.Log{
		txnLog(t, cf, 1, UserTxnPayload{UserID: "u", ExpectRev: 0, Puts: []memory.Memory{mem("u", "E1", "episode")},
			Side: []SideKV{{Space: SpaceFacts, Key: "F1", Value: fact}, {Space: SpaceSessions, Key: "run", Value: json.RawMessage(`{}`)}}}),
		// A proposer that read revision 0 too lost the race: nothing of it may land.
		txnLog(t, cf, 2, UserTxnPayload{UserID: "u", ExpectRev: 0, Puts: []memory.Memory{mem("u", "E2", "loser")},
			Side: []SideKV{{Space: SpaceFacts, Key: "F2", Value: fact}}}),
		txnLog(t, cf, 3, UserTxnPayload{UserID: "u", ExpectRev: 1, Side: []SideKV{{Space: SpaceSessions, Key: "run"}}}),
	})
	if r := res[0].(ApplyResult); r.Conflict || r.Rev != 1 {
		t.Fatalf("first txn: %+v", r)
	}
	if r := res[1].(ApplyResult); !r.Conflict || r.Rev != 1 {
		t.Fatalf("stale txn must conflict at rev 1: %+v", r)
	}
	if _, err := db.GetMemory(1, "u", "E2"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatal("a conflicting transaction wrote its memory")
	}
	facts, err := db.ReadSide(1, SpaceFacts, "u", "", 0)
	if err != nil || facts.Rev != 2 || len(facts.Items) != 1 || facts.Items[0].Key != "F1" {
		t.Fatalf("facts = %+v, %v", facts, err)
	}
	if s, _ := db.ReadSide(1, SpaceSessions, "u", "", 0); len(s.Items) != 0 {
		t.Fatalf("deleted session still there: %+v", s)
	}
	// Forgetting the user reaches side records and the revision.
	b, _ := EncodeDeleteUser(DeleteUserPayload{UserID: "u"})
	f.ApplyBatch([]*raft.Log{{Index: 4, Term: 1, Type: raft.LogCommand, Data: b}})
	if s, _ := db.ReadSide(1, SpaceFacts, "u", "", 0); len(s.Items) != 0 || s.Rev != 0 {
		t.Fatalf("forget left side state: %+v", s)
	}
}

func TestUserTxnDecodeRejectsForeignPutsAndSpaces(t *testing.T) {
	for _, cf := range commandFormats {
		enc := Encoder{Commands: cf}
		b, _ := enc.UserTxn(UserTxnPayload{UserID: "u", Puts: []memory.Memory{mem("other", "X", "x")}})
		if _, err := DecodeCommand(b); !errors.Is(err, ErrUnknownCommand) {
			t.Fatalf("format %d: a put of another user must not decode: %v", cf, err)
		}
		rev := []SideKV{{Space: 'i', Key: "", Value: json.RawMessage(`1`)}}
		b, _ = enc.UserTxn(UserTxnPayload{UserID: "u", Side: rev})
		if _, err := DecodeCommand(b); !errors.Is(err, ErrUnknownCommand) {
			t.Fatalf("format %d: a write to the revision space must not decode: %v", cf, err)
		}
	}
}

func TestUsersListsEachUserOnce(t *testing.T) {
	db := openMem(t, vfs.NewMem())
	defer db.Close()
	f, err := NewShardFSM(db, 2, &recIndexer{}, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	f.ApplyBatch([]*raft.Log{putLog(t, 1, mem("b", "1", "x"), mem("b", "2", "y"), mem("a", "3", "z"), mem("ab", "4", "w"))})
	var users []string
	if err := db.Users(2, func(u string) bool { users = append(users, u); return true }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(users, ",") != "a,b,ab" { // length-prefixed keys: shorter ids first
		t.Fatalf("users = %v", users)
	}
}
