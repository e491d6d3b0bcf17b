// Package consolidation is the deterministic core of the memory model: working
// memory with a rolling summary (working.go), segmentation of conversations into episodes
// (segment.go, episode.go), write-time fact extraction behind a write gate (extract.go,
// gate.go, rules.go), the ADD/UPDATE/DELETE/NONE decision against the user's bi-temporal
// facts (decide.go, confidence.go, fact.go), a graph view of current facts (graph.go),
// episode → semantic pattern consolidation (patterns.go) and perceptual aggregates with
// anomaly detection (perceptual.go, anomaly.go).
//
// Everything here is pure: no storage, no clock, no randomness, no network. Ids come from
// an IDFunc and time from the caller, so the leader can compute a consolidation once and
// propose its result as a Raft command that every replica applies verbatim. The rules
// are English and cheap; an LLM extractor can be plugged into Consolidator.Extract where
// one is configured. See DESIGN.md for the choices and defaults.
package consolidation
