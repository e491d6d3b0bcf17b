package cluster

import (
	"errors"
	"testing"

	"github.com/memcluster/memcluster/storage"
)

func TestHalfRecordsOnlyOnceEveryMemberReadsThem(t *testing.T) {
	half := int(storage.RecordHalf)
	for _, c := range []struct {
		name   string
		nodes  map[string]int // node → NodeInfo.Records
		states map[string]string
		want   bool
	}{
		{name: "no members yet"},
		{name: "every member", nodes: map[string]int{"a": half, "b": half, "c": half}, want: true},
		{name: "one older build", nodes: map[string]int{"a": half, "b": 0, "c": half}},
		{name: "an older member draining still counts", nodes: map[string]int{"a": half, "b": 0},
			states: map[string]string{"b": NodeDraining}},
		{name: "an older member removed does not", nodes: map[string]int{"a": half, "b": 0},
			states: map[string]string{"b": NodeRemoved}, want: true},
	} {
		st := MetaState{Nodes: map[string]NodeInfo{}, States: c.states}
		for id, rec := range c.nodes {
			st.Nodes[id] = NodeInfo{ID: id, Records: rec}
		}
		if got := everyMemberReads(st, storage.RecordHalf); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// A backup written before records were half precision restores; one of an unknown record format does not.
func TestRestoreReadsBackupsOfEitherRecordFormat(t *testing.T) {
	for _, c := range []struct {
		got  any
		want bool
	}{{float64(1), true}, {float64(2), true}, {float64(3), false}, {nil, false}} {
		if ok := backupFormatReadable("record", c.got, 2); ok != c.want {
			t.Errorf("record format %v: %v, want %v", c.got, ok, c.want)
		}
	}
	if backupFormatReadable("keys", float64(2), 1) {
		t.Error("keys format 2 restored by a build of format 1")
	}
	// Half records go only to a cluster whose every member reads them.
	mid := MetaState{Nodes: map[string]NodeInfo{"a": {ID: "a", Records: int(storage.RecordHalf)}, "b": {ID: "b"}}}
	if err := recordsRestorable(float64(2), mid); !errors.Is(err, ErrRefused) {
		t.Errorf("half records into a cluster with an older member: %v, want ErrRefused", err)
	}
	if err := recordsRestorable(float64(1), mid); err != nil {
		t.Errorf("float32 records into that cluster: %v", err)
	}
}

// A backup names the record format its cluster writes, so an older build can restore one taken mid-upgrade.
func TestBackupNamesTheRecordFormatItsClusterWrites(t *testing.T) {
	st := MetaState{Nodes: map[string]NodeInfo{"a": {ID: "a", Records: int(storage.RecordHalf)}, "b": {ID: "b"}}}
	if got := backupFormats(st)["record"]; got != int(storage.RecordF32) {
		t.Errorf("mid-upgrade: record format %v, want %d", got, storage.RecordF32)
	}
	st.Nodes["b"] = NodeInfo{ID: "b", Records: int(storage.RecordHalf)}
	if got := backupFormats(st)["record"]; got != int(storage.RecordHalf) {
		t.Errorf("upgraded: record format %v, want %d", got, storage.RecordHalf)
	}
}
