package tiering_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/tiering"
)

// The whole cold path the lead wires through Raft, on a local directory store: select, encode, upload,
// describe; then find the segment from the archive record and rehydrate every item.
func TestTierAndRehydrate(t *testing.T) {
	ctx := context.Background()
	store := openFile(t, t.TempDir())
	ms := newGen(12, "user/with slash").memories(1500, now, 365*day)
	byID := map[string]memory.Memory{}
	for _, m := range ms {
		byID[m.ID] = m
	}
	p := policy(t, tiering.Options{})
	var archives []memory.Memory
	for i, g := range p.Select(ms, nil, now) {
		seg, err := tiering.Encode(g.Items, g.Meta())
		if err != nil {
			t.Fatal(err)
		}
		key := tiering.SegmentKey(5, g.Meta(), tiering.SegmentID(seg))
		if err := store.Put(ctx, key, seg); err != nil {
			t.Fatal(err)
		}
		if err := store.Put(ctx, key, seg); err != nil { // a retried upload
			t.Fatal(err)
		}
		e := tiering.NewArchiveEntry(g, key, tiering.Checksum(seg), tiering.ArchiveOptions{})
		archives = append(archives, e.Memory(string(rune('A'+i)), now))
	}
	keys, err := store.List(ctx, tiering.UserPrefix(5, "user/with slash"))
	if err != nil || len(keys) != len(archives) || len(keys) < 9 {
		t.Fatalf("%d keys (%v), %d archives", len(keys), err, len(archives))
	}
	seen := 0
	for _, a := range archives {
		seg, err := store.Get(ctx, a.Metadata["segment"])
		if err != nil {
			t.Fatal(err)
		}
		if tiering.SegmentID(seg) != a.Metadata["checksum"] {
			t.Fatal("fetched segment is not the archived one")
		}
		_, items, err := tiering.Decode(seg)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			if !reflect.DeepEqual(it, cold(byID[it.ID])) {
				t.Fatalf("item %s changed in the cold tier", it.ID)
			}
			seen++
		}
		// The archives themselves never tier again.
		if got := p.Select([]memory.Memory{a}, nil, now.Add(10*365*day)); len(got) != 0 {
			t.Fatal("an archive record was selected")
		}
	}
	if cutoff := now.Add(-90 * day); seen != countBefore(ms, cutoff) {
		t.Fatalf("%d items rehydrated, %d were older than 90 days", seen, countBefore(ms, cutoff))
	}
}

func countBefore(ms []memory.Memory, t time.Time) int {
	n := 0
	for _, m := range ms {
		if m.CreatedAt.Before(t) && m.OccurredAt.Before(t) {
			n++
		}
	}
	return n
}
