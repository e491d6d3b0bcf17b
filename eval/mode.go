package eval

import "fmt"

// Mode selects how questions are searched.
type Mode string

// The search modes of the harness.
const (
	ModeHybrid   Mode = "hybrid"   // 0.7 × vector + 0.3 × BM25, the server's defaults
	ModeBM25     Mode = "bm25"     // BM25 only
	ModeVector   Mode = "vector"   // embeddings only
	ModePipeline Mode = "pipeline" // the server's default search mode for one user (retrieval/DESIGN.md)
)

// Modes lists every mode.
var Modes = []Mode{ModeHybrid, ModeBM25, ModeVector, ModePipeline}

// ParseMode returns the mode named s.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown mode %q (want hybrid, bm25, vector or pipeline)", s)
}

// Weights returns the vector and text weights the mode sends with each search.
func (m Mode) Weights() (vector, text float64) {
	switch m {
	case ModeBM25:
		return 0, 1
	case ModeVector:
		return 1, 0
	}
	return 0.7, 0.3
}

// Note says what a mode does beyond its weights, empty when nothing.
func (m Mode) Note() string {
	if m == ModePipeline {
		return `searched with the server's "pipeline" mode (query plan, BM25-weighted fusion, actor factor, episode neighbours); the weights sent are the hybrid defaults`
	}
	return ""
}

// SearchMode is the server search mode the harness mode asks for: "pipeline" for ModePipeline, else "hybrid"
// (bm25 and vector are the hybrid mode with one weight at zero).
func (m Mode) SearchMode() string {
	if m == ModePipeline {
		return "pipeline"
	}
	return "hybrid"
}
