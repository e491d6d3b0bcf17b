package retrieval

import (
	"bytes"
	"testing"
	"unsafe"
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
	must(w.vector("m-2", []float32{1, 0}))
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
	id, _ := r.vector(2, nil, known)
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
