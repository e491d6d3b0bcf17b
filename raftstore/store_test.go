package raftstore

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func newTestStore(t *testing.T) (*Store, func(prefix []byte) *Store) {
	t.Helper()
	db := openPebble(t, t.TempDir())
	t.Cleanup(func() { db.Close() })
	open := func(prefix []byte) *Store {
		s, err := New(db, prefix, Options{NoSync: true})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		return s
	}
	return open(groupPrefix(0)), open
}

func TestCodecRoundTrip(t *testing.T) {
	if got := (time.Time{}).Unix(); got != zeroTimeUnix {
		t.Fatalf("zeroTimeUnix = %d, time.Time{}.Unix() = %d", zeroTimeUnix, got)
	}
	for _, l := range []*raft.Log{
		mkLog(1, 1),
		{Index: 1<<64 - 1, Term: 1<<64 - 1, Type: raft.LogConfiguration, Data: make([]byte, 70000)},
		{},
	} {
		var got raft.Log
		if err := decodeLog(appendLog(nil, l), &got); err != nil {
			t.Fatalf("decode: %v", err)
		}
		if !sameLog(&got, l) || got.AppendedAt.IsZero() != l.AppendedAt.IsZero() {
			t.Fatalf("round trip = %+v, want %+v", got, *l)
		}
		if n := len(appendLog(nil, l)); n != encodedSize(l) {
			t.Fatalf("encoded %d bytes, encodedSize %d", n, encodedSize(l))
		}
	}
}

// StoreLogs reserves encodedSize bytes in its batch and encodes in place: the size must be exact at every
// varint's boundaries and for times before 1970 (negative seconds) or zero.
func TestEncodedSizeIsExact(t *testing.T) {
	times := []time.Time{{}, time.Unix(0, 0), time.Unix(-1, 999_999_999), time.Unix(1<<40, 1), time.Now()}
	for _, n := range []uint64{0, 1, 127, 128, 16383, 16384, 1<<63 - 1, 1 << 63, 1<<64 - 1} {
		for _, size := range []int{0, 127, 128, 16384} {
			for _, at := range times {
				l := &raft.Log{Index: n, Term: n / 2, Data: make([]byte, size), Extensions: make([]byte, size/2),
					AppendedAt: at}
				if got, want := len(appendLog(nil, l)), encodedSize(l); got != want {
					t.Fatalf("index %d, %d bytes, at %v: encoded %d, encodedSize %d", n, size, at, got, want)
				}
			}
		}
	}
}

func TestCodecRejects(t *testing.T) {
	good := appendLog(nil, mkLog(3, 1))
	future := append([]byte{formatV1 + 1}, good[1:]...)
	var l raft.Log
	if err := decodeLog(future, &l); !errors.Is(err, ErrUnknownFormat) {
		t.Fatalf("unknown version: err = %v", err)
	}
	for _, b := range [][]byte{nil, good[:len(good)-1], good[:5], append(good[:len(good):len(good)], 0)} {
		if err := decodeLog(b, &l); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("decode %x: err = %v, want ErrCorrupt", b, err)
		}
	}
}

func TestGetLogUnknownVersion(t *testing.T) {
	s, _ := newTestStore(t)
	mustStore(t, s, mkLogs(1, 2, 1))
	// Simulate an entry written by a newer binary.
	v := appendLog(nil, mkLog(2, 1))
	v[0] = 9
	if err := s.db.Set(s.keys.logKey(2), v, nil); err != nil {
		t.Fatal(err)
	}
	var l raft.Log
	if err := s.GetLog(2, &l); !errors.Is(err, ErrUnknownFormat) {
		t.Fatalf("GetLog err = %v, want ErrUnknownFormat", err)
	}
	// An entry stored under the wrong index is corruption, not data.
	if err := s.db.Set(s.keys.logKey(1), appendLog(nil, mkLog(7, 1)), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.GetLog(1, &l); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("GetLog err = %v, want ErrCorrupt", err)
	}
}

func TestNewRejectsEmptyPrefix(t *testing.T) {
	db := openPebble(t, t.TempDir())
	defer db.Close()
	if _, err := New(db, nil, Options{}); !errors.Is(err, ErrEmptyPrefix) {
		t.Fatalf("err = %v", err)
	}
}

// Groups sharing a DB must not see each other's logs or stable keys, and a
// range deletion in one must not touch its neighbours.
func TestPrefixIsolation(t *testing.T) {
	a, open := newTestStore(t)
	b, c := open(groupPrefix(1)), open(groupPrefix(2))
	mustStore(t, a, mkLogs(1, 10, 1))
	mustStore(t, b, mkLogs(5, 20, 1))
	mustStore(t, c, mkLogs(1, 3, 1))
	if err := b.DeleteRange(0, 1<<64-1); err != nil {
		t.Fatal(err)
	}
	if err := a.SetUint64([]byte("CurrentTerm"), 4); err != nil {
		t.Fatal(err)
	}
	wantBounds(t, a, 1, 10)
	wantBounds(t, b, 0, 0)
	wantBounds(t, c, 1, 3)
	if n, err := c.GetUint64([]byte("CurrentTerm")); err != nil || n != 0 {
		t.Fatalf("neighbour sees stable key: %d, %v", n, err)
	}
	// Reopening recovers bounds by seeking within the prefix only.
	wantBounds(t, open(groupPrefix(0)), 1, 10)
	wantBounds(t, open(groupPrefix(1)), 0, 0)
}

func TestDeleteRangeMiddleKeepsBounds(t *testing.T) {
	s, open := newTestStore(t)
	mustStore(t, s, mkLogs(1, 10, 1))
	if err := s.DeleteRange(4, 6); err != nil {
		t.Fatal(err)
	}
	wantBounds(t, s, 1, 10)
	wantMissing(t, s, 5)
	// Gaps are tolerated: a head deletion that ends inside the gap lands
	// on the next stored entry.
	if err := s.DeleteRange(1, 4); err != nil {
		t.Fatal(err)
	}
	wantBounds(t, s, 7, 10)
	wantBounds(t, open(groupPrefix(0)), 7, 10)
}

// Appends race with head truncation (raft's snapshot goroutine) and
// readers; the cached bounds must match what a fresh seek finds.
func TestConcurrentBounds(t *testing.T) {
	s, open := newTestStore(t)
	const n = 2000
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		for i := uint64(1); i <= n; i += 4 {
			if err := s.StoreLogs(mkLogs(i, i+3, 1)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := uint64(100); i < n-100; i += 100 {
			if err := s.DeleteRange(0, i); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for range 5000 {
			f, _ := s.FirstIndex()
			l, _ := s.LastIndex()
			if f > l+1 && l != 0 {
				t.Errorf("first %d > last %d", f, l)
				return
			}
		}
	}()
	wg.Wait()
	f, _ := s.FirstIndex()
	l, _ := s.LastIndex()
	if l != n {
		t.Fatalf("last = %d, want %d", l, n)
	}
	wantBounds(t, open(groupPrefix(0)), f, l)
}
