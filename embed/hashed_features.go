package embed

import (
	"math"
	"math/bits"
	"unicode"
)

// Feature kinds seed the hash so a word, a bigram and an n-gram with the same
// runes land in unrelated buckets.
const (
	kindUnigram uint64 = 1
	kindBigram  uint64 = 2
	kindChar    uint64 = 3

	fnvOffset64 uint64 = 14695981039346656037
	fnvPrime64  uint64 = 1099511628211

	markStart rune = 0x02 // word boundary markers: never a word rune
	markEnd   rune = 0x03
	wordSep   rune = 0x20
)

// span is one token: runes[start:end] of the scratch buffer.
type span struct{ start, end int32 }

// scratch holds per-call buffers; pooled so the hot path does not allocate.
type scratch struct {
	runes  []rune
	padded []rune // one word with its boundary markers
	spans  []span
	tab    featTable
}

// tokenize lowercases text and splits it into maximal runs of letters,
// digits and combining marks.
func (s *scratch) tokenize(text string) {
	s.runes, s.spans = s.runes[:0], s.spans[:0]
	start := -1
	for _, r := range text {
		if isWordRune(r) {
			if start < 0 {
				start = len(s.runes)
			}
			s.runes = append(s.runes, toLower(r))
			continue
		}
		if start >= 0 {
			s.spans = append(s.spans, span{int32(start), int32(len(s.runes))})
			start = -1
		}
	}
	if start >= 0 {
		s.spans = append(s.spans, span{int32(start), int32(len(s.runes))})
	}
}

func isWordRune(r rune) bool {
	if r < 0x80 {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r)
}

func toLower(r rune) rune {
	if r < 0x80 {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return r
	}
	return unicode.ToLower(r)
}

// featureBound is an upper bound on the features of the current text.
func (s *scratch) featureBound(minN, maxN int) int {
	n := 2 * len(s.spans)
	for _, sp := range s.spans {
		n += (int(sp.end-sp.start) + 2) * (maxN - minN + 1)
	}
	return n
}

// fnv mixes one rune into an FNV-1a state. Whole code points, not UTF-8
// bytes, are mixed: same result on every platform, fewer steps.
func fnv(h uint64, r rune) uint64 { return (h ^ uint64(r)) * fnvPrime64 }

func fnvRunes(h uint64, rs []rune) uint64 {
	for _, r := range rs {
		h = fnv(h, r)
	}
	return h
}

// fmix64 is MurmurHash3's finaliser: FNV's low bits are weak, and both the
// bucket and the sign are taken from the hash.
func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

func wordHash(w []rune) uint64 { return fnvRunes(fnv(fnvOffset64, rune(kindUnigram)), w) }

// addFeatures puts every weighted feature of the tokenised text in the table.
func (h *Hashed) addFeatures(s *scratch) {
	o := h.opt
	uw, bw, cw, sw := float32(o.UnigramWeight), float32(o.BigramWeight), float32(o.CharWeight), float32(o.StopwordWeight)
	prevW := float32(0)
	var prev []rune
	for _, sp := range s.spans {
		w := s.runes[sp.start:sp.end]
		wh := wordHash(w)
		scale := float32(1)
		if _, ok := h.stop[wh]; ok {
			scale = sw
		}
		if uw > 0 && scale > 0 {
			s.tab.add(fmix64(wh), uw*scale)
		}
		if bw > 0 && prev != nil && scale*prevW > 0 {
			bh := fnv(fnvRunes(fnv(fnvOffset64, rune(kindBigram)), prev), wordSep)
			s.tab.add(fmix64(fnvRunes(bh, w)), bw*scale*prevW)
		}
		if cw > 0 && scale > 0 {
			h.addCharGrams(s, w, cw*scale)
		}
		prev, prevW = w, scale
	}
}

// addCharGrams adds the n-grams of "<w>" with weights scaled so that one
// word's n-grams carry L2 mass cw whatever the word's length.
func (h *Hashed) addCharGrams(s *scratch, w []rune, cw float32) {
	minN, maxN := h.opt.MinN, h.opt.MaxN
	padded := len(w) + 2
	count := 0
	for n := minN; n <= maxN && n <= padded; n++ {
		count += padded - n + 1
	}
	if count == 0 {
		return
	}
	each := cw / float32(math.Sqrt(float64(count)))
	s.padded = append(append(append(s.padded[:0], markStart), w...), markEnd)
	p := s.padded
	seed := fnv(fnvOffset64, rune(kindChar))
	for i := 0; i+minN <= padded; i++ {
		hh := fnvRunes(seed, p[i:i+minN-1])
		for _, r := range p[i+minN-1 : min(i+maxN, padded)] {
			hh = fnv(hh, r)
			s.tab.add(fmix64(hh), each)
		}
	}
}

// featTable is an open-addressing map from feature hash to (count, weight sum),
// needed for sublinear tf: a feature seen c times is worth mean(w)·(1+ln c).
type featTable struct {
	slots []slot
	used  []int32 // occupied slots, in insertion order: deterministic projection
	mask  uint64
}

type slot struct {
	key       uint64 // 0 = empty
	cnt, wsum float32
}

func (t *featTable) reset(bound int) {
	size := 1 << bits.Len(uint(2*bound)) // load factor below 1/2
	if size > len(t.slots) {
		t.slots = make([]slot, size)
	} else {
		for _, i := range t.used {
			t.slots[i].key = 0
		}
		size = len(t.slots)
	}
	t.mask = uint64(size - 1)
	t.used = t.used[:0]
}

func (t *featTable) add(key uint64, w float32) {
	if key == 0 {
		key = 1 // 0 marks an empty slot
	}
	for i := key & t.mask; ; i = (i + 1) & t.mask {
		sl := &t.slots[i]
		switch sl.key {
		case key:
			sl.cnt++
			sl.wsum += w
			return
		case 0:
			*sl = slot{key, 1, w}
			t.used = append(t.used, int32(i))
			return
		}
	}
}

// project folds the features into dst: the bucket from the high bits, the
// sign from the lowest, so collisions cancel on average instead of adding up.
func (t *featTable) project(dst []float32) {
	dim := uint64(len(dst))
	for _, i := range t.used {
		k, c, v := t.slots[i].key, t.slots[i].cnt, t.slots[i].wsum
		if c > 1 {
			v = v / c * (1 + float32(math.Log(float64(c))))
		}
		if k&1 == 1 {
			v = -v
		}
		dst[(k>>1)%dim] += v
	}
}
