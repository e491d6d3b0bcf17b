package cluster

import (
	"errors"
	"testing"

	"github.com/memcluster/memcluster/storage"
)

func TestProposalsWriteTheNewestRecordsEveryMemberReads(t *testing.T) {
	half, bin := int(storage.RecordHalf), int(storage.RecordBinary)
	for _, c := range []struct {
		name   string
		nodes  map[string]int // node → NodeInfo.Records
		states map[string]string
		want   storage.RecordFormat
	}{
		{name: "no members yet", want: storage.RecordF32},
		{name: "every member", nodes: map[string]int{"a": bin, "b": bin, "c": bin}, want: storage.RecordBinary},
		{name: "a member of the build before", nodes: map[string]int{"a": bin, "b": half, "c": bin}, want: storage.RecordHalf},
		{name: "a member of an older build", nodes: map[string]int{"a": bin, "b": 0, "c": half}, want: storage.RecordF32},
		{name: "a member of a newer build", nodes: map[string]int{"a": bin, "b": bin + 1}, want: storage.RecordBinary},
		{name: "a format number past a byte", nodes: map[string]int{"a": bin, "b": 256}, want: storage.RecordBinary},
		{name: "an older member draining still counts", nodes: map[string]int{"a": bin, "b": half},
			states: map[string]string{"b": NodeDraining}, want: storage.RecordHalf},
		{name: "an older member removed does not", nodes: map[string]int{"a": bin, "b": 0},
			states: map[string]string{"b": NodeRemoved}, want: storage.RecordBinary},
	} {
		st := MetaState{Nodes: map[string]NodeInfo{}, States: c.states}
		for id, rec := range c.nodes {
			st.Nodes[id] = NodeInfo{ID: id, Records: rec}
		}
		if got := clusterRecords(st); got != c.want {
			t.Errorf("%s: format %d, want %d", c.name, got, c.want)
		}
	}
}

// Raft command formats follow the record formats' rule: binary transaction headers only once every member not
// removed reads them; a member that names no format (a build from before) reads only the first.
func TestProposalsWriteTheNewestCommandsEveryMemberReads(t *testing.T) {
	bin := int(storage.CommandBinary)
	for _, c := range []struct {
		name   string
		nodes  map[string]int // node → NodeInfo.Commands
		states map[string]string
		want   storage.CommandFormat
	}{
		{name: "no members yet", want: storage.CommandJSON},
		{name: "every member", nodes: map[string]int{"a": bin, "b": bin, "c": bin}, want: storage.CommandBinary},
		{name: "a member of an older build", nodes: map[string]int{"a": bin, "b": 0, "c": bin},
			want: storage.CommandJSON},
		{name: "a member of a newer build", nodes: map[string]int{"a": bin, "b": bin + 1}, want: storage.CommandBinary},
		{name: "an older member removed", nodes: map[string]int{"a": bin, "b": 0},
			states: map[string]string{"b": NodeRemoved}, want: storage.CommandBinary},
	} {
		st := MetaState{Nodes: map[string]NodeInfo{}, States: c.states}
		for id, f := range c.nodes {
			st.Nodes[id] = NodeInfo{ID: id, Records: int(storage.RecordNewest), Commands: f}
		}
		if got := clusterCommands(st); got != c.want {
			t.Errorf("%s: format %d, want %d", c.name, got, c.want)
		}
	}
}

// A backup written in any record format this build reads restores; one of an unknown record format does not.
func TestRestoreReadsBackupsOfEveryRecordFormat(t *testing.T) {
	for _, c := range []struct {
		got  any
		want bool
	}{{float64(1), true}, {float64(2), true}, {float64(3), true}, {float64(4), false}, {nil, false}} {
		if ok := backupFormatReadable("record", c.got, int(storage.RecordNewest)); ok != c.want {
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
	// Binary records likewise, to a cluster whose every member reads them.
	mid = MetaState{Nodes: map[string]NodeInfo{"a": {ID: "a", Records: int(storage.RecordBinary)}, "b": {ID: "b", Records: int(storage.RecordHalf)}}}
	if err := recordsRestorable(float64(3), mid); !errors.Is(err, ErrRefused) {
		t.Errorf("binary records into a cluster with a member reading half records: %v, want ErrRefused", err)
	}
	if err := recordsRestorable(float64(2), mid); err != nil {
		t.Errorf("half records into that cluster: %v", err)
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
		t.Errorf("half upgraded: record format %v, want %d", got, storage.RecordHalf)
	}
	st.Nodes["a"] = NodeInfo{ID: "a", Records: int(storage.RecordBinary)}
	st.Nodes["b"] = NodeInfo{ID: "b", Records: int(storage.RecordBinary)}
	if got := backupFormats(st)["record"]; got != int(storage.RecordBinary) {
		t.Errorf("upgraded: record format %v, want %d", got, storage.RecordBinary)
	}
}
