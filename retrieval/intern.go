package retrieval

import "unique"

// intern returns the process's one copy of s. The attributes and timelines of a shard keep a few strings of
// every memory that repeat across memories (its user, type, agent, run, tags, actor and name tokens); decoded
// from each record they were as many copies, a third of a loaded node's live heap objects (docs/benchmarks.md,
// "Repeated strings interned"). A restart already shared them through the checkpoint's symbol table. The
// handles behind unique.Make are weak: a string no memory uses any more is collected.
func intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// internAll returns a copy of ss whose strings are interned, or nil for an empty ss. It copies so that the
// caller's slice (a decoded memory's, which others may read) is never written.
func internAll(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = intern(s)
	}
	return out
}
