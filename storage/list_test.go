package storage

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/memory"
)

// TestListPagesWithFilterAndScanBound: pages follow id order and end with an empty Next; a filter keeps only
// its memories; a page examines at most scan records and then hands back a cursor, even with nothing kept;
// another user's records never appear; side records page after a key the same way.
func TestListPagesWithFilterAndScanBound(t *testing.T) {
	db := openMem(t, vfs.NewMem())
	defer db.Close()
	f, err := NewShardFSM(db, 1, &recIndexer{}, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	var ms []memory.Memory
	var side []SideKV
	for i := 0; i < 10; i++ {
		m := mem("u", fmt.Sprintf("E%02d", i), "text")
		if i%3 == 0 {
			m.AgentID, m.Tags = "a1", []string{"x"}
		}
		ms = append(ms, m)
		side = append(side, SideKV{Space: SpaceHistory, Key: fmt.Sprintf("H%02d", i), Value: json.RawMessage(`{}`)})
	}
	f.ApplyBatch([]*raft.Log{putLog(t, 1, append(ms, mem("v", "E00", "other user"))...),
		txnLog(t, CommandBinary, 2, UserTxnPayload{UserID: "u", Side: side})})

	var ids []string
	after := ""
	for {
		p, err := db.List(1, "u", after, 4, 100, ListFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range p.Memories {
			ids = append(ids, m.ID)
		}
		if after = p.Next; after == "" {
			break
		}
	}
	if fmt.Sprint(ids) != "[E00 E01 E02 E03 E04 E05 E06 E07 E08 E09]" {
		t.Fatalf("pages: %v", ids)
	}
	p, err := db.List(1, "u", "", 10, 2, ListFilter{AgentID: "a1", Tags: []string{"x"}})
	if err != nil || len(p.Memories) != 1 || p.Memories[0].ID != "E00" || p.Next != "E01" {
		t.Fatalf("scan-bounded page: %+v %v", p, err)
	}
	p, _ = db.List(1, "u", "E03", 10, 2, ListFilter{AgentID: "a1"})
	if len(p.Memories) != 0 || p.Next != "E05" {
		t.Fatalf("a page that kept nothing must still hand back a cursor: %+v", p)
	}
	rd, err := db.ReadSideAfter(1, SpaceHistory, "u", "H07", 5)
	if err != nil || len(rd.Items) != 2 || rd.Items[0].Key != "H08" {
		t.Fatalf("side after H07: %+v %v", rd, err)
	}
}
