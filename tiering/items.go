package tiering

import (
	"math"
	"slices"

	"github.com/cespare/xxhash/v2"

	"github.com/memcluster/memcluster/memory"
)

// The payload of a segment (before compression) is columnar: every item's id, then every item's agent id,
// and so on, text last. Like values sit next to each other, which is what zstd compresses best (ids share
// their time prefix, times are small deltas, tags and metadata keys repeat). User id and type are in the
// header, since a segment holds one user and one type. Embeddings and their model are not stored.

func encodeItems(ms []memory.Memory) []byte {
	e := &enc{b: make([]byte, 0, 256*len(ms))}
	e.uvarint(uint64(len(ms)))
	for _, col := range []func(*memory.Memory) string{
		func(m *memory.Memory) string { return m.ID },
		func(m *memory.Memory) string { return m.AgentID },
		func(m *memory.Memory) string { return m.RunID },
		func(m *memory.Memory) string { return string(m.Scope) },
	} {
		for i := range ms {
			e.str(col(&ms[i]))
		}
	}
	var prev int64
	for i := range ms {
		prev = e.time(ms[i].OccurredAt, prev)
	}
	prev = 0
	for i := range ms {
		prev = e.time(ms[i].CreatedAt, prev)
	}
	for i := range ms {
		e.f64(ms[i].Importance)
	}
	encodeLists(e, ms)
	for i := range ms {
		e.str(ms[i].Text)
	}
	return e.b
}

func encodeLists(e *enc, ms []memory.Memory) {
	for i := range ms {
		e.uvarint(uint64(len(ms[i].Tags)))
		for _, s := range ms[i].Tags {
			e.str(s)
		}
	}
	for i := range ms {
		e.uvarint(uint64(len(ms[i].Entities)))
		for _, s := range ms[i].Entities {
			e.str(s)
		}
	}
	for i := range ms {
		keys := sortedKeys(ms[i].Metadata)
		e.uvarint(uint64(len(keys)))
		for _, k := range keys {
			e.str(k)
			e.str(ms[i].Metadata[k])
		}
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// decodeItems decodes a payload of exactly n items of meta's user and type. It accepts only the canonical
// form (metadata keys sorted and unique, values in range), so what it accepts re-encodes to an equal payload.
func decodeItems(b []byte, meta SegmentMeta, n int) ([]memory.Memory, error) {
	d := &dec{b: b}
	if got := d.uvarint("item count"); d.err == nil && got != uint64(n) {
		d.fail("payload holds %d items, header says %d", got, n)
	}
	if d.err == nil && uint64(n) > uint64(len(d.b)) {
		d.fail("item count %d past the end", n)
	}
	if d.err != nil {
		return nil, d.err
	}
	ms := make([]memory.Memory, n)
	decodeScalars(d, ms, meta)
	decodeLists(d, ms)
	for i := range ms {
		ms[i].Text = d.str("text")
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes after the last item", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	return ms, nil
}

func decodeScalars(d *dec, ms []memory.Memory, meta SegmentMeta) {
	for i := range ms {
		ms[i].UserID, ms[i].Type = meta.UserID, meta.Type
		ms[i].ID = d.str("id")
	}
	for i := range ms {
		ms[i].AgentID = d.str("agent id")
	}
	for i := range ms {
		ms[i].RunID = d.str("run id")
	}
	for i := range ms {
		ms[i].Scope = memory.Scope(d.str("scope"))
	}
	var prev int64
	for i := range ms {
		ms[i].OccurredAt, prev = d.time("occurred_at", prev)
		if d.err == nil && (ms[i].OccurredAt.Before(meta.From) || ms[i].OccurredAt.After(meta.To)) {
			d.fail("item %d occurred outside the segment's time range", i)
		}
	}
	prev = 0
	for i := range ms {
		ms[i].CreatedAt, prev = d.time("created_at", prev)
	}
	for i := range ms {
		ms[i].Importance = d.f64("importance")
		if d.err == nil && !validImportance(ms[i].Importance) {
			d.fail("item %d: importance %v out of range", i, ms[i].Importance)
		}
	}
}

func validImportance(v float64) bool { return !math.IsNaN(v) && v >= 0 && v <= 1 }

func decodeLists(d *dec, ms []memory.Memory) {
	for i := range ms {
		ms[i].Tags = decodeStrings(d, "tags")
	}
	for i := range ms {
		ms[i].Entities = decodeStrings(d, "entities")
	}
	for i := range ms {
		ms[i].Metadata = decodeMetadata(d)
	}
}

func decodeStrings(d *dec, what string) []string {
	n := d.count(what, math.MaxInt32)
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for j := range out {
		out[j] = d.str(what)
	}
	return out
}

func decodeMetadata(d *dec) map[string]string {
	n := d.count("metadata", math.MaxInt32)
	if n == 0 {
		return nil
	}
	out := make(map[string]string, n)
	last := ""
	for j := 0; j < n && d.err == nil; j++ {
		k := d.str("metadata key")
		if j > 0 && k <= last {
			d.fail("metadata keys not sorted and unique")
		}
		out[k], last = d.str("metadata value"), k
	}
	return out
}

// ItemDigest is a digest of everything of m a segment keeps (its cold form, user and type): equal digests
// mean the segment holds m as it is. A tiering command can carry the digest of each item as the leader read
// it, and the state machine delete only items whose current record still has it, so an item changed by a
// plain put between the decision and the apply (plain puts do not bump the user's revision) stays hot.
// A new embedding (re-embedding) does not change the digest.
func ItemDigest(m *memory.Memory) uint64 {
	e := &enc{b: encodeItems([]memory.Memory{*m})}
	e.str(m.UserID)
	e.str(string(m.Type))
	return xxhash.Sum64(e.b)
}
