package tiering_test

import (
	"testing"
	"time"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
	"github.com/memcluster/memcluster/tiering"
)

var ratioNow = time.Date(2025, 6, 15, 12, 0, 0, 0, time.UTC)

// tierAll runs the default policy over ms and encodes every group; it returns the hot bytes (the records
// as storage keeps them, embedding included), the hot bytes without embeddings, and the cold bytes.
func tierAll(tb testing.TB, ms []memory.Memory) (hot, hotNoEmb, cold int, n int) {
	tb.Helper()
	p, err := tiering.NewPolicy(tiering.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	for _, g := range p.Select(ms, nil, ratioNow) {
		seg, err := tiering.Encode(g.Items, g.Meta())
		if err != nil {
			tb.Fatal(err)
		}
		cold += len(seg)
		for i := range g.Items {
			m := g.Items[i]
			rec, err := storage.EncodeMemory(&m)
			if err != nil {
				tb.Fatal(err)
			}
			hot += len(rec)
			m.Embedding = nil
			rec, _ = storage.EncodeMemory(&m)
			hotNoEmb += len(rec)
			n++
		}
	}
	return hot, hotNoEmb, cold, n
}

// TestColdHotRatio measures the cold form against the hot form of the same memories: a year of one user's
// English episodes with 256-dim float32 embeddings. The goal is cold ≤ 1/4 of hot. The data is seeded, so
// the numbers are the same on every run.
func TestColdHotRatio(t *testing.T) {
	t.Run("templates", func(t *testing.T) { checkRatio(t, newGen(1, "user-42")) })
	t.Run("zipf-words", func(t *testing.T) { checkRatio(t, newGen(1, "user-42").diverse()) })
}

func checkRatio(t *testing.T, g *gen) {
	ms := g.memories(3000, ratioNow, 365*24*time.Hour)
	hot, hotNoEmb, cold, n := tierAll(t, ms)
	if n < 2000 {
		t.Fatalf("only %d of %d memories tiered", n, len(ms))
	}
	ratio := float64(cold) / float64(hot)
	t.Logf("%d memories tiered: hot %d B (%.0f B/item), hot without embeddings %d B, cold %d B (%.0f B/item); "+
		"cold/hot = %.3f, cold/hot-without-embeddings = %.3f",
		n, hot, float64(hot)/float64(n), hotNoEmb, cold, float64(cold)/float64(n), ratio, float64(cold)/float64(hotNoEmb))
	if ratio > 0.25 {
		t.Fatalf("cold/hot = %.3f, want ≤ 0.25", ratio)
	}
}

// BenchmarkEncodeSegment encodes one full group (500 items) and reports the cold/hot byte ratio.
func BenchmarkEncodeSegment(b *testing.B) {
	ms := newGen(2, "user-7").memories(500, time.Date(2024, 1, 31, 0, 0, 0, 0, time.UTC), 29*24*time.Hour)
	meta := tiering.SegmentMeta{UserID: "user-7", Class: tiering.ClassEpisodic, Type: memory.Episodic,
		From: ms[0].OccurredAt, To: ms[len(ms)-1].OccurredAt}
	hot := 0
	for i := range ms {
		rec, _ := storage.EncodeMemory(&ms[i])
		hot += len(rec)
	}
	var seg []byte
	b.SetBytes(int64(hot))
	for b.Loop() {
		var err error
		if seg, err = tiering.Encode(ms, meta); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(seg))/float64(hot), "cold/hot")
}

// BenchmarkDecodeSegment decodes one full group (500 items).
func BenchmarkDecodeSegment(b *testing.B) {
	ms := newGen(2, "user-7").memories(500, time.Date(2024, 1, 31, 0, 0, 0, 0, time.UTC), 29*24*time.Hour)
	meta := tiering.SegmentMeta{UserID: "user-7", Class: tiering.ClassEpisodic, Type: memory.Episodic,
		From: ms[0].OccurredAt, To: ms[len(ms)-1].OccurredAt}
	seg, err := tiering.Encode(ms, meta)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(seg)))
	for b.Loop() {
		if _, _, err := tiering.Decode(seg); err != nil {
			b.Fatal(err)
		}
	}
}
