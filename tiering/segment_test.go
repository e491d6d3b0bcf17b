package tiering_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/tiering"
)

func monthOf(t *testing.T, seed uint64, n int) ([]memory.Memory, tiering.SegmentMeta) {
	t.Helper()
	ms := newGen(seed, "u-1").memories(n, time.Date(2024, 3, 31, 0, 0, 0, 0, time.UTC), 29*24*time.Hour)
	return ms, tiering.SegmentMeta{UserID: "u-1", Class: tiering.ClassEpisodic, Type: memory.Episodic,
		From: ms[0].OccurredAt, To: ms[len(ms)-1].OccurredAt}
}

// cold is m as a segment gives it back: no embedding or model, times in UTC.
func cold(m memory.Memory) memory.Memory {
	m.Embedding, m.EmbedModel = nil, ""
	m.OccurredAt, m.CreatedAt = m.OccurredAt.UTC(), m.CreatedAt.UTC()
	return m
}

func TestSegmentRoundTrip(t *testing.T) {
	ms, meta := monthOf(t, 3, 50)
	// Odd but legal values survive too: other time zones, zero CreatedAt, shared scope, empty lists, unicode.
	ms[0].OccurredAt = ms[0].OccurredAt.In(time.FixedZone("X", -7*3600))
	ms[1].CreatedAt, ms[1].Scope, ms[1].Tags, ms[1].Metadata = time.Time{}, memory.Shared, nil, nil
	ms[2].Text, ms[2].AgentID, ms[2].Importance = "naïve café — 東京 \x00 tab\tend", "", 1
	seg, err := tiering.Encode(ms, meta)
	if err != nil {
		t.Fatal(err)
	}
	got, items, err := tiering.Decode(seg)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != len(ms) {
		t.Fatalf("%d items back, want %d", len(items), len(ms))
	}
	for i := range ms {
		if want := cold(ms[i]); !reflect.DeepEqual(items[i], want) {
			t.Fatalf("item %d:\n got %+v\nwant %+v", i, items[i], want)
		}
	}
	if got.Count != len(ms) || got.Checksum != tiering.Checksum(seg) || got.UserID != meta.UserID ||
		!got.From.Equal(meta.From) || !got.To.Equal(meta.To) || got.Class != meta.Class || got.Type != meta.Type {
		t.Fatalf("meta %+v, encoded from %+v", got, meta)
	}
	hdr, err := tiering.ReadHeader(seg)
	if err != nil || !reflect.DeepEqual(hdr, got) {
		t.Fatalf("ReadHeader = %+v, %v; want %+v", hdr, err, got)
	}
	again, _ := tiering.Encode(ms, meta)
	if !bytes.Equal(seg, again) {
		t.Fatal("encoding is not deterministic")
	}
}

func TestSegmentPerceptual(t *testing.T) {
	at := time.Date(2024, 5, 2, 10, 0, 0, 0, time.UTC)
	ms := []memory.Memory{
		{ID: "01HX0000000000000000000001", UserID: "u", Type: memory.Episodic, Text: "Heart rate spiked to 150.",
			OccurredAt: at, Metadata: map[string]string{memory.MetaSource: "perceptual", "signal": "heart_rate"}},
		{ID: "01HX0000000000000000000002", UserID: "u", Type: memory.Episodic, Text: "Heart rate low.",
			OccurredAt: at.Add(time.Hour), Metadata: map[string]string{memory.MetaSource: "perceptual", "signal": "heart_rate"}},
	}
	meta := tiering.SegmentMeta{UserID: "u", Class: tiering.ClassPerceptual, Type: memory.Episodic,
		Signal: "heart_rate", From: at, To: at.Add(time.Hour)}
	seg, err := tiering.Encode(ms, meta)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := tiering.Decode(seg)
	if err != nil || got.Signal != "heart_rate" || got.Class != tiering.ClassPerceptual {
		t.Fatalf("decode: %+v, %v", got, err)
	}
	meta.Signal = "steps"
	if _, err := tiering.Encode(ms, meta); !errors.Is(err, tiering.ErrInvalid) {
		t.Fatalf("items of another signal: %v, want ErrInvalid", err)
	}
}

func TestEncodeRefusesMixedInput(t *testing.T) {
	base, meta := monthOf(t, 4, 3)
	for name, change := range map[string]func([]memory.Memory, *tiering.SegmentMeta){
		"empty":           func(ms []memory.Memory, _ *tiering.SegmentMeta) { clear(ms) },
		"other user":      func(ms []memory.Memory, _ *tiering.SegmentMeta) { ms[1].UserID = "u-2" },
		"other type":      func(ms []memory.Memory, _ *tiering.SegmentMeta) { ms[1].Type = memory.Semantic },
		"working":         func(ms []memory.Memory, m *tiering.SegmentMeta) { m.Type = memory.Working },
		"perceptual item": func(ms []memory.Memory, _ *tiering.SegmentMeta) { ms[1].Metadata["source"] = "perceptual" },
		"archive entry":   func(ms []memory.Memory, _ *tiering.SegmentMeta) { ms[1].Metadata["tier"] = "archive" },
		"before range": func(ms []memory.Memory, _ *tiering.SegmentMeta) {
			ms[0].OccurredAt = ms[0].OccurredAt.Add(-time.Second)
		},
		"after range":       func(ms []memory.Memory, m *tiering.SegmentMeta) { m.To = m.To.Add(-time.Nanosecond) },
		"inverted range":    func(ms []memory.Memory, m *tiering.SegmentMeta) { m.From, m.To = m.To, m.From },
		"duplicate id":      func(ms []memory.Memory, _ *tiering.SegmentMeta) { ms[1].ID = ms[0].ID },
		"no user":           func(ms []memory.Memory, m *tiering.SegmentMeta) { m.UserID = "" },
		"signal on episode": func(ms []memory.Memory, m *tiering.SegmentMeta) { m.Signal = "x" },
		"importance":        func(ms []memory.Memory, _ *tiering.SegmentMeta) { ms[2].Importance = 1.5 },
		"year 10000": func(ms []memory.Memory, _ *tiering.SegmentMeta) {
			ms[2].CreatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
		},
	} {
		ms := make([]memory.Memory, len(base))
		for i := range base {
			ms[i] = base[i]
			ms[i].Metadata = map[string]string{"source": "session"}
		}
		m := meta
		change(ms, &m)
		if name == "empty" {
			ms = nil
		}
		if _, err := tiering.Encode(ms, m); !errors.Is(err, tiering.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

// Every truncation and every single-byte change of a segment is refused with a named error, never accepted
// and never a panic.
func TestSegmentCorruption(t *testing.T) {
	ms, meta := monthOf(t, 5, 20)
	seg, err := tiering.Encode(ms, meta)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(seg); n++ {
		if _, _, err := tiering.Decode(seg[:n]); !errors.Is(err, tiering.ErrCorrupt) {
			t.Fatalf("torn at %d of %d bytes: %v, want ErrCorrupt", n, len(seg), err)
		}
	}
	for i := range seg {
		b := bytes.Clone(seg)
		b[i] ^= 0x20
		_, _, err := tiering.Decode(b)
		want := tiering.ErrCorrupt
		if i == 4 { // the version byte
			want = tiering.ErrVersion
		}
		if !errors.Is(err, want) {
			t.Fatalf("byte %d flipped: %v, want %v", i, err, want)
		}
	}
	if _, _, err := tiering.Decode(append(bytes.Clone(seg), 0)); !errors.Is(err, tiering.ErrCorrupt) {
		t.Fatalf("trailing byte: %v", err)
	}
}

func TestSegmentLimits(t *testing.T) {
	ms, meta := monthOf(t, 6, 100)
	seg, err := tiering.Encode(ms, meta)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tiering.DecodeWithLimits(seg, tiering.DecodeLimits{MaxItems: 99}); !errors.Is(err, tiering.ErrTooLarge) {
		t.Fatalf("100 items under a limit of 99: %v", err)
	}
	if _, _, err := tiering.DecodeWithLimits(seg, tiering.DecodeLimits{MaxRawBytes: 1000}); !errors.Is(err, tiering.ErrTooLarge) {
		t.Fatalf("payload over MaxRawBytes: %v", err)
	}
	if _, _, err := tiering.DecodeWithLimits(seg, tiering.DecodeLimits{MaxItems: 100}); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
}

func TestItemDigest(t *testing.T) {
	ms, _ := monthOf(t, 7, 1)
	m := ms[0]
	d := tiering.ItemDigest(&m)
	re := m
	re.Embedding, re.EmbedModel = []float32{1, 2}, "other"
	if tiering.ItemDigest(&re) != d {
		t.Fatal("a new embedding changed the digest")
	}
	for name, change := range map[string]func(*memory.Memory){
		"text":       func(m *memory.Memory) { m.Text += "!" },
		"metadata":   func(m *memory.Memory) { m.Metadata = map[string]string{"k": "v"} },
		"importance": func(m *memory.Memory) { m.Importance += 0.01 },
		"user":       func(m *memory.Memory) { m.UserID += "x" },
		"type":       func(m *memory.Memory) { m.Type = memory.Semantic },
		"tags":       func(m *memory.Memory) { m.Tags = append(m.Tags, "new") },
	} {
		c := m
		change(&c)
		if tiering.ItemDigest(&c) == d {
			t.Errorf("changing %s kept the digest", name)
		}
	}
}

// A segment whose payload is larger than the zstd window (8 MiB) still decodes: 300 items of 30 KiB.
func TestSegmentLargeItems(t *testing.T) {
	ms, meta := monthOf(t, 8, 300)
	g := newGen(8, "u-1").diverse()
	for i := range ms {
		var b strings.Builder
		for b.Len() < 30<<10 {
			b.WriteString(g.zipfSentence() + " ")
		}
		ms[i].Text = b.String()
	}
	seg, err := tiering.Encode(ms, meta)
	if err != nil {
		t.Fatal(err)
	}
	_, items, err := tiering.Decode(seg)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 300 || items[299].Text != ms[299].Text {
		t.Fatal("large segment did not round-trip")
	}
	t.Logf("300 items of 30 KiB: %d bytes cold", len(seg))
}
