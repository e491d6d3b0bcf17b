package tiering

import "github.com/memcluster/memcluster/memory"

// Class is the tiering class of a memory: which rule decides when it leaves the hot tier, and which
// partition of the cold tier it goes to.
type Class string

// The tierable classes. Working memory has no class: it never leaves the hot tier.
const (
	ClassEpisodic   Class = "episodic"
	ClassSemantic   Class = "semantic"
	ClassPerceptual Class = "perceptual"
)

// Metadata keys this package reads or writes.
const (
	// MetaSignal names the signal of a perceptual memory (set by the signals path of the server).
	MetaSignal = "signal"
	// MetaTier marks the hot-tier record of an archive entry ("archive"); such records never tier again.
	MetaTier = "tier"
	// sourcePerceptual is the memory.MetaSource value of memories derived from perceptual signals.
	sourcePerceptual = "perceptual"
)

// ClassOf returns m's class; ok is false for memories that never tier: working memory, unknown types and
// the archive entries themselves. A memory of type perceptual, or any memory the perceptual path made
// (Metadata["source"] == "perceptual", e.g. an anomaly episode), is perceptual.
func ClassOf(m *memory.Memory) (c Class, ok bool) {
	if m.Metadata[MetaTier] != "" {
		return "", false
	}
	switch m.Type {
	case memory.Perceptual:
		return ClassPerceptual, true
	case memory.Episodic:
		if m.Metadata[memory.MetaSource] == sourcePerceptual {
			return ClassPerceptual, true
		}
		return ClassEpisodic, true
	case memory.Semantic:
		return ClassSemantic, true
	}
	return "", false
}

// validPair reports whether a segment of class c may hold memories of type t.
func validPair(c Class, t memory.Type) bool {
	switch c {
	case ClassEpisodic:
		return t == memory.Episodic
	case ClassSemantic:
		return t == memory.Semantic
	case ClassPerceptual:
		return t == memory.Perceptual || t == memory.Episodic
	}
	return false
}
