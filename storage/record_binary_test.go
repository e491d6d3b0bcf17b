package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/memcluster/memcluster/memory"
)

func fullMemory() memory.Memory {
	return memory.Memory{ID: "01ARZ3NDEKTSV4RRFFQ69G5FAV", UserID: "u1", AgentID: "agent", RunID: "run", Type: memory.Semantic,
		Text: "user: <b>R&D</b> \"quoted\"\n é 😀", OccurredAt: time.Unix(1700000000, 123456789).UTC(),
		CreatedAt: time.Unix(1700000100, 0).UTC(), Tags: []string{"t1", "t2"}, Entities: []string{"Alice"},
		Importance: 0.75, Metadata: map[string]string{"session_id": "s1", "role": "user", "": "empty key"},
		Embedding: []float32{0.5, -0.25, 0.125}, EmbedModel: "hashed-v1", Scope: memory.Shared}
}

// A binary record reads back as the same memory as a half record, its JSON twin, whatever the memory: where
// the two would differ the encoder writes the half record.
func TestBinaryRecordReadsAsItsJSONTwin(t *testing.T) {
	empty := memory.Memory{}
	cases := map[string]memory.Memory{"full": fullMemory(), "seed": seedMemory(), "zero": empty}
	m := fullMemory()
	m.Tags, m.Metadata, m.Entities = []string{}, map[string]string{}, nil
	cases["empty collections"] = m
	m = fullMemory()
	m.OccurredAt = time.Date(2024, 2, 29, 23, 59, 59, 5, time.FixedZone("IST", 5*3600+1800))
	cases["offset time"] = m
	m = fullMemory()
	m.CreatedAt = time.Date(2024, 2, 29, 23, 59, 59, 5, time.FixedZone("", 0))
	cases["zero offset, not UTC"] = m
	m = fullMemory()
	m.Text = "bad \xff utf8"
	cases["invalid UTF-8"] = m
	m = fullMemory()
	m.Metadata = map[string]string{"k\xfe": "v"}
	cases["invalid UTF-8 key"] = m
	m = fullMemory()
	m.OccurredAt = time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC)
	cases["year before 0"] = m
	m = fullMemory()
	m.Importance = math.Inf(1)
	cases["infinite importance"] = m
	m = fullMemory()
	m.Importance = 1e-310
	cases["subnormal importance"] = m
	for name, m := range cases {
		bin, berr := EncodeMemoryAs(&m, RecordBinary)
		half, herr := EncodeMemoryAs(&m, RecordHalf)
		if (berr == nil) != (herr == nil) {
			t.Fatalf("%s: binary error %v, half error %v", name, berr, herr)
		}
		if herr != nil {
			continue
		}
		wantFormat := RecordBinary
		if !binaryFits(&m) {
			wantFormat = RecordHalf
		}
		if RecordFormat(bin[0]) != wantFormat {
			t.Errorf("%s: written as format %d, want %d", name, bin[0], wantFormat)
		}
		got, err := DecodeMemory(bin)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := DecodeMemory(half)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\nbinary %#v\nhalf   %#v", name, got, want)
		}
		again, err := EncodeMemoryAs(&got, RecordBinary)
		if wantFormat == RecordBinary && (err != nil || !bytes.Equal(again, bin)) {
			t.Errorf("%s: re-encoded record differs (%v)", name, err)
		}
	}
}

func TestDecodeWithoutEmbeddingReadsEveryFormat(t *testing.T) {
	m := fullMemory()
	m.Embedding = randomEmbedding(rand.New(rand.NewPCG(5, 6)), 256)
	for _, f := range []RecordFormat{RecordF32, RecordHalf, RecordBinary} {
		rec, err := EncodeMemoryAs(&m, f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeMemoryWithoutEmbedding(rec)
		if err != nil {
			t.Fatalf("format %d: %v", f, err)
		}
		full, _ := DecodeMemory(rec)
		full.Embedding = nil
		if !reflect.DeepEqual(got, full) {
			t.Fatalf("format %d: %+v, want %+v", f, got, full)
		}
		if _, err := DecodeMemoryWithoutEmbedding(rec[:len(rec)-1]); !errors.Is(err, ErrBadRecord) {
			t.Errorf("format %d: a short embedding read without error (%v)", f, err)
		}
	}
}

func TestDecodeRefusesABadBinaryRecord(t *testing.T) {
	m := fullMemory()
	rec, _ := EncodeMemoryAs(&m, RecordBinary)
	l, w := binary.Uvarint(rec[1:])
	fields := rec[1+w : 1+w+int(l)]
	tail := rec[1+w+int(l):]
	withFields := func(f []byte) []byte {
		out := binary.AppendUvarint([]byte{byte(RecordBinary)}, uint64(len(f)))
		return append(append(out, f...), tail...)
	}
	// The metadata's keys written in reverse order: the last two key/value pairs swapped.
	swapped := bytes.Clone(fields)
	i := bytes.Index(swapped, []byte("\x04role\x04user"))
	j := bytes.Index(swapped, []byte("\x0asession_id\x02s1"))
	if i < 0 || j < 0 {
		t.Fatal("metadata not found in the fields")
	}
	copy(swapped[i:], "\x0asession_id\x02s1")
	copy(swapped[i+len("\x0asession_id\x02s1"):], "\x04role\x04user")
	for name, b := range map[string][]byte{
		"fields cut":           withFields(fields[:len(fields)-1]),
		"bytes after fields":   withFields(append(bytes.Clone(fields), 0)),
		"keys out of order":    withFields(swapped),
		"string past the end":  withFields(append([]byte{0x7f}, fields[1:]...)),
		"embedding cut":        rec[:len(rec)-1],
		"unknown version":      append([]byte{byte(RecordNewest) + 1}, rec[1:]...),
		"nanoseconds too many": withFields(bytes.Replace(fields, binary.AppendUvarint(nil, 123456789), binary.AppendUvarint(nil, 1e9), 1)),
	} {
		if _, err := DecodeMemory(b); !errors.Is(err, ErrBadRecord) {
			t.Errorf("%s: err %v, want ErrBadRecord", name, err)
		}
	}
	// What the encoder writes in format 2 instead is refused in format 3: it could not be encoded again.
	for name, change := range map[string]func(*memory.Memory){
		"NaN importance":    func(m *memory.Memory) { m.Importance = math.NaN() },
		"text not UTF-8":    func(m *memory.Memory) { m.Text = "bad \xff" },
		"year past 9999":    func(m *memory.Memory) { m.CreatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
		"metadata key \xfe": func(m *memory.Memory) { m.Metadata = map[string]string{"k\xfe": "v"} },
	} {
		bad := fullMemory()
		change(&bad)
		if _, err := DecodeMemory(encodeBinary(&bad)); !errors.Is(err, ErrBadRecord) {
			t.Errorf("%s: err %v, want ErrBadRecord", name, err)
		}
	}
	if _, err := DecodeMemory(withFields(fields)); err != nil {
		t.Fatalf("the record rebuilt from its parts: %v", err)
	}
}

// FuzzBinaryRecordReadsAsItsJSONTwin builds memories from fuzzed fields and holds the binary record to the half
// record's JSON; and whatever bytes follow the version byte, decoding fails cleanly or gives a memory that
// encodes again.
func FuzzBinaryRecordReadsAsItsJSONTwin(f *testing.F) {
	full := fullMemory()
	bin, _ := EncodeMemoryAs(&full, RecordBinary)
	f.Add("id", "user: text é", "k", "v", "tag", int64(1700000000), int64(5), 0.5, bin[1:])
	f.Add("", "bad \xff", "", "", "", int64(-62135596800), int64(0), -1e300, []byte{3, 1, 0})
	f.Fuzz(func(t *testing.T, id, text, k, v, tag string, sec, ns int64, imp float64, raw []byte) {
		m := memory.Memory{ID: id, UserID: "u", Type: memory.Type(tag), Text: text, Tags: []string{tag},
			OccurredAt: time.Unix(sec, ns).UTC(), CreatedAt: time.Unix(sec/2, 0).UTC(), Importance: imp,
			Metadata: map[string]string{k: v, k + "x": text}, EmbedModel: tag}
		bin, berr := EncodeMemoryAs(&m, RecordBinary)
		half, herr := EncodeMemoryAs(&m, RecordHalf)
		if (berr == nil) != (herr == nil) {
			t.Fatalf("binary error %v, half error %v", berr, herr)
		}
		if herr == nil {
			got, err1 := DecodeMemory(bin)
			want, err2 := DecodeMemory(half)
			if err1 != nil || err2 != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("%v %v\nbinary %#v\nhalf   %#v", err1, err2, got, want)
			}
		}
		got, err := DecodeMemory(append([]byte{byte(RecordBinary)}, raw...))
		if err != nil {
			if !errors.Is(err, ErrBadRecord) {
				t.Fatalf("error %v is not ErrBadRecord", err)
			}
			return
		}
		if _, err := EncodeMemoryAs(&got, RecordBinary); err != nil {
			t.Fatalf("a decoded record does not encode: %v", err)
		}
	})
}
