package embed

import (
	"context"
	"fmt"
	"math"
	"sync"
)

// HashedOptions configures the hashed embedder. Zero fields take the stated
// defaults; a negative weight turns that feature family off.
type HashedOptions struct {
	Dim            int     // vector length; default 256
	MinN           int     // shortest character n-gram, in runes including boundary markers; default 3
	MaxN           int     // longest character n-gram; default 5
	UnigramWeight  float64 // weight of a word; default 1.0
	BigramWeight   float64 // weight of a pair of adjacent words; default 0.7
	CharWeight     float64 // L2 mass of all character n-grams of one word, whatever its length; default 1.0
	StopwordWeight float64 // multiplier for features built from a stopword, in (0,1]; default 0.2; negative drops them
}

// Hashed defaults.
const (
	DefaultHashedDim      = 256
	defaultMinN           = 3
	defaultMaxN           = 5
	defaultUnigramWeight  = 1.0
	defaultBigramWeight   = 0.7
	defaultCharWeight     = 1.0
	defaultStopwordWeight = 0.2
	maxHashedDim          = 1 << 16
	maxNGram              = 16
)

func (o HashedOptions) withDefaults() HashedOptions {
	if o.Dim == 0 {
		o.Dim = DefaultHashedDim
	}
	if o.MinN == 0 {
		o.MinN = defaultMinN
	}
	if o.MaxN == 0 {
		o.MaxN = max(defaultMaxN, o.MinN)
	}
	o.UnigramWeight = weightOr(o.UnigramWeight, defaultUnigramWeight)
	o.BigramWeight = weightOr(o.BigramWeight, defaultBigramWeight)
	o.CharWeight = weightOr(o.CharWeight, defaultCharWeight)
	o.StopwordWeight = weightOr(o.StopwordWeight, defaultStopwordWeight)
	return o
}

// weightOr maps 0 to the default and any negative value to 0 (feature off).
func weightOr(w, def float64) float64 {
	switch {
	case w == 0:
		return def
	case w < 0:
		return 0
	}
	return w
}

// Validate reports the first invalid field, after defaults are applied.
func (o HashedOptions) Validate() error {
	o = o.withDefaults()
	switch {
	case o.Dim < 1 || o.Dim > maxHashedDim:
		return fmt.Errorf("%w: hashed dim %d out of range [1, %d]", ErrInvalidOptions, o.Dim, maxHashedDim)
	case o.MinN < 1 || o.MaxN < o.MinN || o.MaxN > maxNGram:
		return fmt.Errorf("%w: hashed n-gram range %d-%d (want 1 <= min <= max <= %d)", ErrInvalidOptions, o.MinN, o.MaxN, maxNGram)
	case o.StopwordWeight > 1:
		return fmt.Errorf("%w: hashed stopword weight %g above 1", ErrInvalidOptions, o.StopwordWeight)
	case o.UnigramWeight == 0 && o.BigramWeight == 0 && o.CharWeight == 0:
		return fmt.Errorf("%w: hashed: every feature family is turned off", ErrInvalidOptions)
	}
	for _, w := range []float64{o.UnigramWeight, o.BigramWeight, o.CharWeight, o.StopwordWeight} {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return fmt.Errorf("%w: hashed weight %g is not finite", ErrInvalidOptions, w)
		}
	}
	return nil
}

// Hashed is the built-in embedder: signed feature hashing of words, word
// bigrams and character n-grams. It needs no weights and is deterministic
// across platforms and releases with the same Fingerprint. Safe for concurrent use.
type Hashed struct {
	opt  HashedOptions
	stop map[uint64]struct{} // unigram hashes of stopwords
	fp   string
	pool sync.Pool // *scratch, reused so a call allocates only its output
}

// NewHashed returns a hashed embedder.
func NewHashed(opt HashedOptions) (*Hashed, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt = opt.withDefaults()
	h := &Hashed{opt: opt, stop: stopwordSet()}
	h.fp = fmt.Sprintf("hashed-v1/d%d/n%d-%d/u%g/b%g/c%g/s%g/fnv1a-sw1",
		opt.Dim, opt.MinN, opt.MaxN, opt.UnigramWeight, opt.BigramWeight, opt.CharWeight, opt.StopwordWeight)
	h.pool.New = func() any { return new(scratch) }
	return h, nil
}

// Dim returns the vector length.
func (h *Hashed) Dim() int { return h.opt.Dim }

// Fingerprint names the algorithm version and every parameter, e.g.
// "hashed-v1/d256/n3-5/u1/b0.7/c1/s0.2/fnv1a-sw1".
func (h *Hashed) Fingerprint() string { return h.fp }

// Embed hashes each text into a unit vector; an empty text (or one with no
// word characters) yields a zero vector.
func (h *Hashed) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := matrix(len(texts), h.opt.Dim)
	s := h.pool.Get().(*scratch)
	defer h.pool.Put(s)
	for i, t := range texts {
		// Checking every text would cost more than hashing a short one.
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("hashed embed: %w", err)
			}
		}
		h.embedOne(s, t, out[i])
	}
	return out, nil
}

// embedOne writes the unit vector of text into dst (len Dim, zeroed).
func (h *Hashed) embedOne(s *scratch, text string, dst []float32) {
	s.tokenize(text)
	if len(s.spans) == 0 {
		return
	}
	s.tab.reset(s.featureBound(h.opt.MinN, h.opt.MaxN))
	h.addFeatures(s)
	s.tab.project(dst)
	normalize(dst)
}
