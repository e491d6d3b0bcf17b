package retrieval

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/memcluster/memcluster/memory"
)

// Memories indexed through the state machine share their repeated strings, as a checkpoint's load does
// (TestCheckpointReaderSharesRepeatedStrings): each record decodes its own copies. A collection between the two
// puts must not matter (a table of weak handles, as unique.Make keeps, would copy the values again after it).
func TestIndexedMemoriesShareRepeatedStrings(t *testing.T) {
	f := newFixture(t)
	var ids []string
	for i := range 2 {
		if i == 1 {
			runtime.GC()
		}
		// strings.Clone: distinct copies going in, as two decoded records would hold them.
		m := f.put(memory.Memory{UserID: strings.Clone("user-1"), AgentID: strings.Clone("agent-7"),
			RunID: strings.Clone("run-3"), Type: memory.Type(strings.Clone(string(memory.Semantic))),
			Text: []string{"Caroline met Melanie at the lake", "Caroline and Melanie went hiking"}[i],
			Tags: []string{strings.Clone("outdoors")}, Entities: []string{strings.Clone("Melanie")},
			Metadata: map[string]string{"speaker": strings.Clone("Caroline")}})
		ids = append(ids, m.ID)
	}
	f.idx.mu.RLock()
	defer f.idx.mu.RUnlock()
	a0, a1 := f.idx.attrs[ids[0]], f.idx.attrs[ids[1]]
	tl := f.idx.tl.users["user-1"]
	e0, e1 := tl.entries[ids[0]], tl.entries[ids[1]]
	same := func(what, a, b string) {
		t.Helper()
		if a != b || unsafe.StringData(a) != unsafe.StringData(b) {
			t.Fatalf("%s: %q and %q are two strings", what, a, b)
		}
	}
	same("user", a0.user, a1.user)
	same("type", string(a0.typ), string(a1.typ))
	same("agent", a0.agent, a1.agent)
	same("run", a0.run, a1.run)
	same("tag", a0.tags[0], a1.tags[0])
	same("actor", e0.actor, e1.actor)
	same("name", e0.names[len(e0.names)-1], e1.names[len(e1.names)-1])
}

// A memory's name tokens are kept once each, in their first order, however many it has (past 16 a map checks).
func TestEntryOfKeepsEachNameOnce(t *testing.T) {
	var ents, want []string
	for i := range 40 {
		ents = append(ents, fmt.Sprintf("Name%d", i%25))
		if i < 25 {
			want = append(want, fmt.Sprintf("name%d", i))
		}
	}
	var syms symbols
	e := entryOf(memory.Memory{Entities: ents}, &syms)
	if !slices.Equal(e.names, want) {
		t.Fatalf("names %v, want %v", e.names, want)
	}
}
