package raftstore

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
)

// mkLog returns a fully populated entry, so every field is round-tripped.
func mkLog(index, term uint64) *raft.Log {
	return &raft.Log{
		Index:      index,
		Term:       term,
		Type:       raft.LogCommand,
		Data:       fmt.Appendf(nil, "data-%d-%d", index, term),
		Extensions: fmt.Appendf(nil, "ext-%d", index),
		AppendedAt: time.Unix(1700000000, int64(index)).UTC(),
	}
}

func mkLogs(from, to, term uint64) []*raft.Log {
	var logs []*raft.Log
	for i := from; i <= to; i++ {
		logs = append(logs, mkLog(i, term))
	}
	return logs
}

func sameLog(a, b *raft.Log) bool {
	return a.Index == b.Index && a.Term == b.Term && a.Type == b.Type &&
		bytes.Equal(a.Data, b.Data) && bytes.Equal(a.Extensions, b.Extensions) &&
		a.AppendedAt.Equal(b.AppendedAt)
}

func mustStore(t *testing.T, s raft.LogStore, logs []*raft.Log) {
	t.Helper()
	if err := s.StoreLogs(logs); err != nil {
		t.Fatalf("StoreLogs: %v", err)
	}
}

func wantBounds(t *testing.T, s raft.LogStore, first, last uint64) {
	t.Helper()
	f, err := s.FirstIndex()
	if err != nil {
		t.Fatalf("FirstIndex: %v", err)
	}
	l, err := s.LastIndex()
	if err != nil {
		t.Fatalf("LastIndex: %v", err)
	}
	if f != first || l != last {
		t.Fatalf("bounds = [%d, %d], want [%d, %d]", f, l, first, last)
	}
}

func wantLog(t *testing.T, s raft.LogStore, want *raft.Log) {
	t.Helper()
	var got raft.Log
	if err := s.GetLog(want.Index, &got); err != nil {
		t.Fatalf("GetLog(%d): %v", want.Index, err)
	}
	if !sameLog(&got, want) {
		t.Fatalf("GetLog(%d) = %+v, want %+v", want.Index, got, *want)
	}
}

func wantMissing(t *testing.T, s raft.LogStore, index uint64) {
	t.Helper()
	var got raft.Log
	if err := s.GetLog(index, &got); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("GetLog(%d) err = %v, want raft.ErrLogNotFound", index, err)
	}
}

// raftTreatsAsMissing mirrors how raft reads stable keys (raft.go
// requestVote, api.go NewRaft/HasExistingState): a missing key must come
// back either without error or with an error whose text is exactly
// "not found" (raft-boltdb), and with a zero value.
func raftTreatsAsMissing(err error) bool {
	return err == nil || err.Error() == "not found"
}

// conformance is the one table every backend must pass. Indexes are
// contiguous from 1 because raft-wal rejects gaps.
var conformance = []struct {
	name string
	run  func(t *testing.T, s logStableStore, reopen func() logStableStore)
}{
	{"empty", func(t *testing.T, s logStableStore, _ func() logStableStore) {
		wantBounds(t, s, 0, 0)
		wantMissing(t, s, 1)
	}},
	{"store_get", func(t *testing.T, s logStableStore, _ func() logStableStore) {
		if err := s.StoreLog(mkLog(1, 1)); err != nil {
			t.Fatalf("StoreLog: %v", err)
		}
		wantBounds(t, s, 1, 1)
		wantLog(t, s, mkLog(1, 1))
	}},
	{"zero_fields", func(t *testing.T, s logStableStore, _ func() logStableStore) {
		l := &raft.Log{Index: 1, Term: 2, Type: raft.LogNoop}
		mustStore(t, s, []*raft.Log{l})
		var got raft.Log
		if err := s.GetLog(1, &got); err != nil {
			t.Fatalf("GetLog: %v", err)
		}
		if got.Index != 1 || got.Term != 2 || got.Type != raft.LogNoop || len(got.Data) != 0 || len(got.Extensions) != 0 {
			t.Fatalf("GetLog = %+v", got)
		}
	}},
	{"batch", func(t *testing.T, s logStableStore, _ func() logStableStore) {
		mustStore(t, s, mkLogs(1, 100, 1))
		wantBounds(t, s, 1, 100)
		for _, l := range mkLogs(1, 100, 1) {
			wantLog(t, s, l)
		}
	}},
	{"get_missing", func(t *testing.T, s logStableStore, _ func() logStableStore) {
		mustStore(t, s, mkLogs(1, 10, 1))
		wantMissing(t, s, 0)
		wantMissing(t, s, 11)
		wantMissing(t, s, 1<<40)
	}},
	{"delete_head", func(t *testing.T, s logStableStore, _ func() logStableStore) {
		mustStore(t, s, mkLogs(1, 100, 1))
		if err := s.DeleteRange(1, 40); err != nil {
			t.Fatalf("DeleteRange: %v", err)
		}
		wantBounds(t, s, 41, 100)
		// raft-wal (v0.4.0) only drops whole segments, so entries below
		// FirstIndex stay readable until their segment is deleted. raft
		// never reads below FirstIndex, so we accept the stale entry from
		// it, but nothing else.
		if _, isWAL := s.(*wal.WAL); isWAL {
			var got raft.Log
			if err := s.GetLog(40, &got); err == nil && !sameLog(&got, mkLog(40, 1)) {
				t.Fatalf("GetLog(40) after head truncation = %+v", got)
			}
		} else {
			wantMissing(t, s, 40)
		}
		wantLog(t, s, mkLog(41, 1))
		mustStore(t, s, mkLogs(101, 110, 1))
		wantBounds(t, s, 41, 110)
	}},
	{"delete_tail_then_append", func(t *testing.T, s logStableStore, _ func() logStableStore) {
		mustStore(t, s, mkLogs(1, 100, 1))
		if err := s.DeleteRange(61, 100); err != nil {
			t.Fatalf("DeleteRange: %v", err)
		}
		wantBounds(t, s, 1, 60)
		wantMissing(t, s, 61)
		// A follower replaces a conflicting suffix with the new leader's.
		mustStore(t, s, mkLogs(61, 70, 2))
		wantBounds(t, s, 1, 70)
		wantLog(t, s, mkLog(61, 2))
		wantLog(t, s, mkLog(60, 1))
	}},
	{"delete_all_then_append", func(t *testing.T, s logStableStore, _ func() logStableStore) {
		mustStore(t, s, mkLogs(1, 100, 1))
		if err := s.DeleteRange(1, 100); err != nil {
			t.Fatalf("DeleteRange: %v", err)
		}
		wantBounds(t, s, 0, 0)
		// After a snapshot install the log restarts past the snapshot.
		mustStore(t, s, mkLogs(501, 510, 3))
		wantBounds(t, s, 501, 510)
		wantLog(t, s, mkLog(505, 3))
	}},
	{"stable_missing", func(t *testing.T, s logStableStore, _ func() logStableStore) {
		v, err := s.Get([]byte("CurrentTerm"))
		if !raftTreatsAsMissing(err) || len(v) != 0 {
			t.Fatalf("Get(missing) = %q, %v", v, err)
		}
		n, err := s.GetUint64([]byte("LastVoteTerm"))
		if !raftTreatsAsMissing(err) || n != 0 {
			t.Fatalf("GetUint64(missing) = %d, %v", n, err)
		}
	}},
	{"stable_set_get", func(t *testing.T, s logStableStore, _ func() logStableStore) {
		if err := s.Set([]byte("LastVoteCand"), []byte("node-2")); err != nil {
			t.Fatalf("Set: %v", err)
		}
		if err := s.SetUint64([]byte("CurrentTerm"), 7); err != nil {
			t.Fatalf("SetUint64: %v", err)
		}
		if err := s.SetUint64([]byte("CurrentTerm"), 1<<63+5); err != nil {
			t.Fatalf("SetUint64: %v", err)
		}
		v, err := s.Get([]byte("LastVoteCand"))
		if err != nil || string(v) != "node-2" {
			t.Fatalf("Get = %q, %v", v, err)
		}
		n, err := s.GetUint64([]byte("CurrentTerm"))
		if err != nil || n != 1<<63+5 {
			t.Fatalf("GetUint64 = %d, %v", n, err)
		}
	}},
	{"reopen", func(t *testing.T, s logStableStore, reopen func() logStableStore) {
		mustStore(t, s, mkLogs(1, 50, 1))
		if err := s.DeleteRange(1, 10); err != nil {
			t.Fatalf("DeleteRange: %v", err)
		}
		if err := s.SetUint64([]byte("CurrentTerm"), 9); err != nil {
			t.Fatalf("SetUint64: %v", err)
		}
		if err := s.Set([]byte("LastVoteCand"), []byte("node-3")); err != nil {
			t.Fatalf("Set: %v", err)
		}
		s = reopen()
		wantBounds(t, s, 11, 50)
		wantMissing(t, s, 10)
		wantLog(t, s, mkLog(11, 1))
		wantLog(t, s, mkLog(50, 1))
		n, err := s.GetUint64([]byte("CurrentTerm"))
		if err != nil || n != 9 {
			t.Fatalf("GetUint64 after reopen = %d, %v", n, err)
		}
		v, err := s.Get([]byte("LastVoteCand"))
		if err != nil || string(v) != "node-3" {
			t.Fatalf("Get after reopen = %q, %v", v, err)
		}
	}},
}

func TestConformance(t *testing.T) {
	for _, b := range backends() {
		for _, tc := range conformance {
			t.Run(b.name+"/"+tc.name, func(t *testing.T) {
				dir := t.TempDir()
				s, closeFn := openOne(t, b, dir)
				reopen := func() logStableStore {
					closeFn()
					s, closeFn = openOne(t, b, dir)
					return s
				}
				defer func() { closeFn() }()
				tc.run(t, s, reopen)
			})
		}
	}
}
