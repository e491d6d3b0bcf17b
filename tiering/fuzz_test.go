package tiering

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/memcluster/memcluster/memory"
)

// fuzzLimits keep every fuzz input's decoded size small; the defaults are tested in TestDecompressionBomb.
var fuzzLimits = DecodeLimits{MaxItems: 1000, MaxRawBytes: 1 << 20}

// FuzzDecodeSegment: bytes from a store are untrusted. Decoding must refuse garbage with one of the
// package's errors (never panic, never inflate past the limits), and a segment it accepts must encode
// again and decode to the same items. Each input is tried as is, with its checksum repaired (so mutations
// reach the decompressor and the item decoder), and as a raw item payload.
func FuzzDecodeSegment(f *testing.F) {
	for _, s := range seedSegments() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkSegment(t, b)
		checkSegment(t, reseal(b))
		checkPayload(t, b)
	})
}

func checkSegment(t *testing.T, b []byte) {
	meta, ms, err := DecodeWithLimits(b, fuzzLimits)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) && !errors.Is(err, ErrTooLarge) {
			t.Fatalf("decode error outside the package's sentinels: %v", err)
		}
		return
	}
	again, err := Encode(ms, meta)
	if err != nil {
		t.Fatalf("accepted segment does not encode again: %v", err)
	}
	meta2, ms2, err := Decode(again)
	if err != nil {
		t.Fatalf("re-encoded segment does not decode: %v", err)
	}
	meta.Checksum, meta2.Checksum = 0, 0
	if !reflect.DeepEqual(meta, meta2) || !reflect.DeepEqual(ms, ms2) {
		t.Fatalf("round trip changed the segment:\n%+v %+v\n%+v %+v", meta, ms, meta2, ms2)
	}
}

func checkPayload(t *testing.T, b []byte) {
	meta := bombMeta()
	meta.From, meta.To = time.Unix(minSec, 0), time.Unix(maxSec, 0)
	d := &dec{b: b}
	n := d.count("n", uint64(fuzzLimits.MaxItems))
	if d.err != nil || n == 0 {
		return
	}
	ms, err := decodeItems(b, meta, n)
	if err != nil {
		return
	}
	ms2, err := decodeItems(encodeItems(ms), meta, n)
	if err != nil || !reflect.DeepEqual(ms, ms2) {
		t.Fatalf("payload round trip: %v\n%+v\n%+v", err, ms, ms2)
	}
}

// seedSegments are valid segments of each class and the hostile shapes the decoder must refuse.
func seedSegments() [][]byte {
	at := time.Date(2024, 2, 3, 4, 5, 6, 7, time.UTC)
	ep := memory.Memory{ID: "01HQ0000000000000000000001", UserID: "u/..", Type: memory.Episodic,
		Text: "Met Maya at the office. We talked about the roadmap.", OccurredAt: at, CreatedAt: at.Add(time.Minute),
		Tags: []string{"work"}, Entities: []string{"Maya"}, Importance: 0.4, Scope: memory.Shared,
		Metadata: map[string]string{"source": "session", "turns": "4"}}
	ep2 := ep
	ep2.ID, ep2.OccurredAt, ep2.Text, ep2.Metadata = "01HQ0000000000000000000002", at.Add(time.Hour), "Second.", nil
	fact := memory.Memory{ID: "01HQ0000000000000000000003", UserID: "ユーザー", Type: memory.Semantic,
		Text: "User lives in Lisbon.", OccurredAt: at, Importance: 0.9,
		Metadata: map[string]string{"fact_status": "superseded"}}
	hr := memory.Memory{ID: "01HQ0000000000000000000004", UserID: "u", Type: memory.Perceptual, Text: "hr 150",
		OccurredAt: at, Metadata: map[string]string{"signal": "heart_rate"}}
	mk := func(ms []memory.Memory, c Class, sig string) []byte {
		meta := SegmentMeta{UserID: ms[0].UserID, Class: c, Type: ms[0].Type, Signal: sig,
			From: ms[0].OccurredAt, To: ms[len(ms)-1].OccurredAt}
		b, err := Encode(ms, meta)
		if err != nil {
			panic(err)
		}
		return b
	}
	good := mk([]memory.Memory{ep, ep2}, ClassEpisodic, "")
	wrongVersion := append([]byte(nil), good...)
	wrongVersion[4] = 2
	many := bombMeta()
	many.Count = 1 << 20
	return [][]byte{
		good,
		mk([]memory.Memory{fact}, ClassSemantic, ""),
		mk([]memory.Memory{hr}, ClassPerceptual, "heart_rate"),
		good[:len(good)/2],                     // torn upload
		wrongVersion,                           // a newer writer
		seal(bombMeta(), 1<<10, zeros(4<<20)),  // inflates past its claim
		seal(bombMeta(), 64<<20, zeros(1<<10)), // claims more than the limits
		seal(many, 10, zeros(10)),              // claims a million items
		encodeItems([]memory.Memory{ep, ep2}),  // a raw payload
		{},
	}
}

// TestWriteFuzzCorpus rewrites testdata/fuzz/FuzzDecodeSegment from seedSegments when
// TIERING_WRITE_CORPUS=1 (after a format change); otherwise it checks the committed corpus decodes as
// expected: the valid seeds decode, the others fail.
func TestWriteFuzzCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzDecodeSegment")
	names := []string{"episodic", "semantic", "perceptual", "torn", "version-2", "bomb-4MiB-claims-1KiB",
		"claims-64MiB", "claims-1M-items", "raw-payload", "empty"}
	seeds := seedSegments()
	if os.Getenv("TIERING_WRITE_CORPUS") == "1" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, s := range seeds {
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
			if err := os.WriteFile(filepath.Join(dir, names[i]), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, name := range names {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Fatalf("seed corpus file missing (run with TIERING_WRITE_CORPUS=1): %v", err)
		}
		_, _, err := DecodeWithLimits(seeds[i], fuzzLimits)
		if valid := i < 3; valid != (err == nil) {
			t.Errorf("seed %s: %v", name, err)
		}
	}
}
