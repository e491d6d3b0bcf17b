package retrieval

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/memcluster/memcluster/memory"
)

// Memories indexed through the state machine share their repeated strings, as a checkpoint's load does
// (TestCheckpointSharesRepeatedStrings): each record decodes its own copies.
func TestIndexedMemoriesShareRepeatedStrings(t *testing.T) {
	f := newFixture(t)
	var ids []string
	for i := range 2 {
		// strings.Clone: distinct copies going in, as two decoded records would hold them.
		m := f.put(memory.Memory{UserID: strings.Clone("u"), AgentID: strings.Clone("agent-7"),
			RunID: strings.Clone("run-3"), Type: memory.Type(strings.Clone(string(memory.Semantic))),
			Text: []string{"Caroline met Melanie at the lake", "Caroline and Melanie went hiking"}[i],
			Tags: []string{strings.Clone("outdoors")}, Entities: []string{strings.Clone("Melanie")},
			Metadata: map[string]string{"speaker": strings.Clone("Caroline")}})
		ids = append(ids, m.ID)
	}
	f.idx.mu.RLock()
	defer f.idx.mu.RUnlock()
	a0, a1 := f.idx.attrs[ids[0]], f.idx.attrs[ids[1]]
	tl := f.idx.tl.users["u"]
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
