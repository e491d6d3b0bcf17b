package retrieval

// symbols keeps one copy of each value that a shard's memories repeat (their user, type, agent, run, tags, actor
// and name tokens), for its attributes and timelines: decoded from each record they were a copy a memory, about two
// fifths of a loaded node's live heap objects (docs/benchmarks.md, "repeated strings interned"). A checkpoint's
// load shares them through a table of its own (ckptReader.sym). The table holds its strings for as long as the
// shard's timelines live (Reset and a failed load start new ones), up to maxSyms values: past it, values unique to
// each memory (a run id a memory, say) would only grow it, and are kept as they come. unique.Make would not do:
// its handles are weak, so a value whose handle was dropped is copied again after the next collection.
// Callers hold ShardIndex.mu for writing.
type symbols struct {
	m map[string]string
}

// maxSyms bounds a table: values past it (run ids unique to every memory, say) are kept as they come.
const maxSyms = 1 << 16

// intern returns the table's copy of s, adding s when there is room.
func (t *symbols) intern(s string) string {
	if v, ok := t.m[s]; ok || s == "" {
		return v
	}
	t.add(s)
	return s
}

// internBytes is intern for bytes being decoded: a value the table holds costs no allocation.
func (t *symbols) internBytes(b []byte) string {
	if v, ok := t.m[string(b)]; ok || len(b) == 0 {
		return v
	}
	s := string(b)
	t.add(s)
	return s
}

func (t *symbols) add(s string) {
	if len(t.m) < maxSyms {
		if t.m == nil {
			t.m = make(map[string]string)
		}
		t.m[s] = s
	}
}

// internAll returns a copy of ss whose strings are interned, or nil for an empty ss. It copies so that the
// caller's slice (a decoded memory's, which others may read) is never written.
func (t *symbols) internAll(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = t.intern(s)
	}
	return out
}
