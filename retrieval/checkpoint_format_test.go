package retrieval

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/x448/float16"
)

// A checkpoint read back gives every memory that holds a value the same string (types, agents, runs, tags,
// actors, names), and a vector the string its memory's id was read into: an open holds each once, not once a
// memory.
func TestCheckpointReaderSharesRepeatedStrings(t *testing.T) {
	var buf bytes.Buffer
	w := newCkptWriter(&buf)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.header(checkpointHeader{model: "m", dim: 2, users: 1}))
	w.str("u")
	for _, id := range []string{"m-1", "m-2"} {
		must(w.memory(id, &attrs{typ: "episodic", agent: "agent", run: "run", tags: []string{"tag"}},
			&tlEntry{actor: "ann", names: []string{"ann"}}))
	}
	must(w.end())
	must(w.vector("m-2", []uint16{0x3c00, 0}, 2))
	must(w.end())
	must(w.finish())

	r, err := newCkptReader(buf.Bytes())
	must(err)
	r.header()
	if u := r.str(); u != "u" {
		t.Fatalf("user %q", u)
	}
	known := map[string]string{}
	var as []*attrs
	var es []*tlEntry
	for {
		id, a, e := r.memory("u")
		if id == "" {
			break
		}
		known[id] = id
		as, es = append(as, a), append(es, e)
	}
	id, half, scale := r.halfRow(2, nil, known)
	if len(half) != 2 || half[0] != 0x3c00 || scale != 2 {
		t.Fatalf("row %v × %v", half, scale)
	}
	must(r.err)
	same := func(what, a, b string) {
		t.Helper()
		if a != b || unsafe.StringData(a) != unsafe.StringData(b) {
			t.Fatalf("%s: %q and %q are two strings", what, a, b)
		}
	}
	if len(as) != 2 {
		t.Fatalf("%d memories read", len(as))
	}
	same("type", string(as[0].typ), string(as[1].typ))
	same("agent", as[0].agent, as[1].agent)
	same("run", as[0].run, as[1].run)
	same("tag", as[0].tags[0], as[1].tags[0])
	same("actor", es[0].actor, es[1].actor)
	same("name", es[0].names[0], es[1].names[0])
	same("vector id", id, known["m-2"])
}

// A checkpoint of float32 vectors (version 1, what builds before half-precision rows wrote) still loads, and
// gives what the records give: its vectors are encoded again, which yields the rows the index held.
func TestCheckpointOfFloat32VectorsStillLoads(t *testing.T) {
	f := newFixture(t)
	f.variedMemories(3)
	path := filepath.Join(t.TempDir(), "shard-0.vectors")
	if err := f.openWith(path, logTail{}, nil).writeCheckpoint(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, asVersion1(t, data), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	got := stateOf(f.openWith(path, logTail{}, &logs))
	if !strings.Contains(logs.String(), `vectors="checkpoint, tail of 0 memories"`) {
		t.Fatalf("open of a version 1 checkpoint: %s", logs.String())
	}
	if want := stateOf(f.openWith("", nil, nil)); !reflect.DeepEqual(got, want) || len(want.Vectors) != 90 {
		t.Fatalf("version 1 checkpoint state differs from the records'\ngot  %v\nwant %v", got, want)
	}
}

// asVersion1 rewrites a checkpoint in version 1: the same header, users and memories, each row as float32s.
func asVersion1(t *testing.T, data []byte) []byte {
	t.Helper()
	r, err := newCkptReader(data)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := newCkptWriter(&buf)
	w.version = checkpointFloats
	h := r.header()
	if err := w.header(h); err != nil {
		t.Fatal(err)
	}
	for range h.users {
		w.str(r.str())
		for {
			id, a, e := r.memory("")
			if id == "" {
				break
			}
			if err := w.memory(id, a, e); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.end(); err != nil {
			t.Fatal(err)
		}
		for {
			id, half, scale := r.halfRow(h.dim, nil, nil)
			if id == "" {
				break
			}
			w.str(id)
			for _, x := range half {
				w.buf = binary.LittleEndian.AppendUint32(w.buf, math.Float32bits(float16.Frombits(x).Float32()*scale))
			}
			if err := w.flush(); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.end(); err != nil {
			t.Fatal(err)
		}
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if err := w.finish(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
