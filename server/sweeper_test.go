package server

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/memcluster/memcluster/consolidation"
)

// storedSession is a session record as an append stores it, with a window of n messages.
func storedSession(tb testing.TB, n int, last time.Time) []byte {
	tb.Helper()
	rec := sessionRecord{AgentID: "agent", Session: consolidation.Session{ID: "run", LastActive: last, LastFlush: last}}
	for i := range n {
		rec.Session.Messages = append(rec.Session.Messages, consolidation.Message{ID: fmt.Sprintf("01JD%022d", i),
			Role: consolidation.RoleUser, Content: fmt.Sprintf("message %d: I live in Lisbon and like green tea.", i),
			Time: last})
	}
	b, err := json.Marshal(rec)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// The sweeper's partial read of a stored session decides as the whole session's Expired does.
func TestIdleSessionAgreesWithTheWholeRecord(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	opts := consolidation.WorkingOptions{IdleTTL: time.Hour}
	for _, last := range []time.Time{{}, now, now.Add(-59 * time.Minute), now.Add(-time.Hour), now.Add(-48 * time.Hour)} {
		v := storedSession(t, 20, last)
		var rec sessionRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			t.Fatal(err)
		}
		if got, want := idleSession(v, now, opts), rec.Session.Expired(now, opts); got != want {
			t.Errorf("last active %v: idle %v, the whole record says %v", last, got, want)
		}
	}
	if idleSession([]byte(`{"session":`), now, opts) {
		t.Error("a record that does not decode was found idle")
	}
}

// BenchmarkSweepDecode: what the sweeper pays a stored session (a 20-message window) to learn if it is idle.
func BenchmarkSweepDecode(b *testing.B) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	opts := consolidation.WorkingOptions{IdleTTL: time.Hour}
	v := storedSession(b, 20, now.Add(-time.Minute))
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(v)))
		for b.Loop() {
			var rec sessionRecord
			if json.Unmarshal(v, &rec) != nil || rec.Session.Expired(now, opts) {
				b.Fatal("decoded as idle")
			}
		}
	})
	b.Run("activity", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(v)))
		for b.Loop() {
			if idleSession(v, now, opts) {
				b.Fatal("decoded as idle")
			}
		}
	})
}
