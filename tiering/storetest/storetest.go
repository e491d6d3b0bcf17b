// Package storetest is the conformance suite every tiering.SegmentStore must pass: the lead's wiring and
// the tiering job rely on exactly these behaviours, whichever backend holds the segments.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/tiering"
)

// Run runs the suite. newStore returns a fresh, empty store for each subtest.
func Run(t *testing.T, newStore func(t *testing.T) tiering.SegmentStore) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, tiering.SegmentStore)
	}{
		{"PutGet", testPutGet},
		{"IdempotentPut", testIdempotentPut},
		{"ConflictingPut", testConflictingPut},
		{"MissingGet", testMissingGet},
		{"Delete", testDelete},
		{"ListByPrefix", testListByPrefix},
		{"OddUserIDs", testOddUserIDs},
		{"BadKeys", testBadKeys},
		{"ConcurrentPuts", testConcurrentPuts},
		{"ConcurrentSameKey", testConcurrentSameKey},
		{"EmptyAndLargeValues", testSizes},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// key is a segment key of user on shard 1 whose id is n.
func key(user string, n int) string {
	meta := tiering.SegmentMeta{UserID: user, Class: tiering.ClassEpisodic, Type: memory.Episodic,
		From: time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2024, 3, 31, 23, 0, 0, 0, time.UTC)}
	return tiering.SegmentKey(1, meta, fmt.Sprintf("%016x", n))
}

func mustPut(t *testing.T, s tiering.SegmentStore, k string, v []byte) {
	t.Helper()
	if err := s.Put(ctx(t), k, v); err != nil {
		t.Fatalf("put %s: %v", k, err)
	}
}

func mustGet(t *testing.T, s tiering.SegmentStore, k string, want []byte) {
	t.Helper()
	got, err := s.Get(ctx(t), k)
	if err != nil {
		t.Fatalf("get %s: %v", k, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("get %s: %d bytes, want %d bytes %q...", k, len(got), len(want), want[:min(len(want), 16)])
	}
}

func mustList(t *testing.T, s tiering.SegmentStore, prefix string, want ...string) {
	t.Helper()
	got, err := s.List(ctx(t), prefix)
	if err != nil {
		t.Fatalf("list %q: %v", prefix, err)
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("list %q = %q, want %q", prefix, got, want)
	}
}

func testPutGet(t *testing.T, s tiering.SegmentStore) {
	k := key("alice", 1)
	v := []byte("segment bytes \x00\xff")
	mustPut(t, s, k, v)
	mustGet(t, s, k, v)
	// The store keeps its own copy: changing the caller's slice changes nothing stored.
	v[0] = 'X'
	mustGet(t, s, k, []byte("segment bytes \x00\xff"))
}

func testIdempotentPut(t *testing.T, s tiering.SegmentStore) {
	k := key("alice", 1)
	v := []byte("same bytes")
	mustPut(t, s, k, v)
	mustPut(t, s, k, slices.Clone(v))
	mustGet(t, s, k, v)
	mustList(t, s, "", k)
}

func testConflictingPut(t *testing.T, s tiering.SegmentStore) {
	k := key("alice", 1)
	mustPut(t, s, k, []byte("first"))
	if err := s.Put(ctx(t), k, []byte("second")); !errors.Is(err, tiering.ErrConflict) {
		t.Fatalf("put of different bytes under an existing key: %v, want ErrConflict", err)
	}
	mustGet(t, s, k, []byte("first"))
}

func testMissingGet(t *testing.T, s tiering.SegmentStore) {
	_, err := s.Get(ctx(t), key("nobody", 7))
	if !errors.Is(err, tiering.ErrNotFound) {
		t.Fatalf("get of a missing key: %v, want ErrNotFound", err)
	}
	mustList(t, s, "")
}

func testDelete(t *testing.T, s tiering.SegmentStore) {
	k := key("alice", 1)
	mustPut(t, s, k, []byte("x"))
	for i := 0; i < 2; i++ { // the second delete finds nothing and still succeeds
		if err := s.Delete(ctx(t), k); err != nil {
			t.Fatalf("delete #%d: %v", i+1, err)
		}
	}
	if _, err := s.Get(ctx(t), k); !errors.Is(err, tiering.ErrNotFound) {
		t.Fatalf("get after delete: %v, want ErrNotFound", err)
	}
	mustList(t, s, "")
	// A deleted key may be written again, with other bytes.
	mustPut(t, s, k, []byte("y"))
	mustGet(t, s, k, []byte("y"))
}

func testListByPrefix(t *testing.T, s tiering.SegmentStore) {
	// "al" is a prefix of "alice" as a string; their key prefixes must not be prefixes of each other.
	a1, a2, al, b := key("alice", 1), key("alice", 2), key("al", 1), key("bob", 1)
	other := tiering.SegmentKey(2, tiering.SegmentMeta{UserID: "alice", Class: tiering.ClassSemantic,
		Type: memory.Semantic, From: time.Unix(0, 0), To: time.Unix(0, 0)}, "0000000000000001")
	for _, k := range []string{a1, a2, al, b, other} {
		mustPut(t, s, k, []byte(k))
	}
	mustList(t, s, tiering.UserPrefix(1, "alice"), a1, a2)
	mustList(t, s, tiering.UserPrefix(1, "al"), al)
	mustList(t, s, tiering.UserPrefix(1, "bob"), b)
	mustList(t, s, tiering.UserPrefix(1, "carol"))
	mustList(t, s, tiering.ShardPrefix(1), a1, a2, al, b)
	mustList(t, s, tiering.UserPrefix(2, "alice"), other)
	mustList(t, s, "", a1, a2, al, b, other)
}

// OddUserIDs are user ids that break naive key schemes: separators, traversal, case, unicode, escapes.
var OddUserIDs = []string{
	"a/b", "../../etc", "..", ".", "a/../b", "/", "//", "Alice", "alice", "al%2Fice", "_2f", "_",
	"ユーザー", "user\u00e9", "use\u0301r", " spaced out ", "a\\b", "a:b*c?", "x.tmp", "",
	string(make([]byte, 300)), longUnicode(),
}

func longUnicode() string {
	var b bytes.Buffer
	for b.Len() < 256 {
		b.WriteString("ü")
	}
	return b.String()
}

func testOddUserIDs(t *testing.T, s tiering.SegmentStore) {
	var all []string
	for i, u := range OddUserIDs {
		k := key(u, i)
		if err := tiering.ValidKey(k); err != nil {
			t.Fatalf("user %q: SegmentKey gave an invalid key: %v", u, err)
		}
		mustPut(t, s, k, []byte(u))
		all = append(all, k)
	}
	for i, u := range OddUserIDs {
		mustGet(t, s, key(u, i), []byte(u))
		mustList(t, s, tiering.UserPrefix(1, u), key(u, i))
	}
	mustList(t, s, "", all...)
}

func testBadKeys(t *testing.T, s tiering.SegmentStore) {
	for _, k := range []string{"", "a//b", "../x", "a/./b", "a/", "/a", "a b", "a\x00b", "ü", "x.tmp",
		string(bytes.Repeat([]byte("a"), 1025))} {
		if err := s.Put(ctx(t), k, []byte("x")); !errors.Is(err, tiering.ErrBadKey) {
			t.Errorf("put %q: %v, want ErrBadKey", k, err)
		}
		if _, err := s.Get(ctx(t), k); !errors.Is(err, tiering.ErrBadKey) {
			t.Errorf("get %q: %v, want ErrBadKey", k, err)
		}
		if err := s.Delete(ctx(t), k); !errors.Is(err, tiering.ErrBadKey) {
			t.Errorf("delete %q: %v, want ErrBadKey", k, err)
		}
	}
	if _, err := s.List(ctx(t), "../"); !errors.Is(err, tiering.ErrBadKey) {
		t.Errorf("list ../: %v, want ErrBadKey", err)
	}
	mustList(t, s, "")
}

func testConcurrentPuts(t *testing.T, s tiering.SegmentStore) {
	const n = 32
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Put(ctx(t), key(fmt.Sprintf("user-%d", i%4), i), bytes.Repeat([]byte{byte(i)}, 1000+i))
		}()
	}
	wg.Wait()
	var want []string
	for i, err := range errs {
		if err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		mustGet(t, s, key(fmt.Sprintf("user-%d", i%4), i), bytes.Repeat([]byte{byte(i)}, 1000+i))
		want = append(want, key(fmt.Sprintf("user-%d", i%4), i))
	}
	mustList(t, s, "", want...)
}

// testConcurrentSameKey races writers of one key: those with the winner's bytes succeed, the others get
// ErrConflict, and the stored value is one writer's bytes in full.
func testConcurrentSameKey(t *testing.T, s tiering.SegmentStore) {
	const n = 16
	k := key("alice", 1)
	vals := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		vals[i] = bytes.Repeat([]byte{byte('a' + i%2)}, 64<<10) // two distinct contents
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = s.Put(ctx(t), k, vals[i]) }()
	}
	wg.Wait()
	got, err := s.Get(ctx(t), k)
	if err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		same := bytes.Equal(vals[i], got)
		switch {
		case same && err != nil:
			t.Errorf("writer %d wrote the stored bytes but got %v", i, err)
		case !same && !errors.Is(err, tiering.ErrConflict):
			t.Errorf("writer %d lost the race but got %v, want ErrConflict", i, err)
		}
	}
	if !bytes.Equal(got, vals[0]) && !bytes.Equal(got, vals[1]) {
		t.Fatalf("stored value is no writer's bytes")
	}
}

func testSizes(t *testing.T, s tiering.SegmentStore) {
	big := make([]byte, 5<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	mustPut(t, s, key("alice", 1), nil)
	mustGet(t, s, key("alice", 1), nil)
	mustPut(t, s, key("alice", 2), big)
	mustGet(t, s, key("alice", 2), big)
}
