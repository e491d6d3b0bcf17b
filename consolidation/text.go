package consolidation

import (
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Lexical helpers shared by every stage. Everything here is deterministic: maps are
// iterated in sorted key order wherever floating-point sums are formed, so the same input
// gives bit-identical scores on every replica.

// words lower-cases s and splits it into runs of letters, digits and inner apostrophes (a typographic
// apostrophe, U+2019, counts as an ASCII one). A run that is already lower-case ASCII is a substring of s, not a
// copy: most words of most messages are.
func words(s string) []string {
	var out []string
	var buf []byte
	for i := 0; i < len(s); {
		j, plain := wordEnd(s, i)
		if j == i {
			_, n := utf8.DecodeRuneInString(s[i:])
			i += n
			continue
		}
		w := s[i:j]
		if !plain {
			buf = lowerWord(buf[:0], w)
			w = string(buf)
		}
		if w = strings.Trim(w, "'"); w != "" {
			out = append(out, w)
		}
		i = j
	}
	return out
}

// wordEnd is where the word starting at i ends (i when s[i] starts none), and whether s[i:end] is already its
// own lower-cased form.
func wordEnd(s string, i int) (end int, plain bool) {
	plain = true
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			switch {
			case 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '\'':
			case 'A' <= c && c <= 'Z':
				plain = false
			default:
				return i, plain
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !inWord(r) {
			return i, plain
		}
		plain = false
		i += n
	}
	return i, plain
}

func inWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '’' }

// lowerWord appends w lower-cased, with each typographic apostrophe (U+2019) as an ASCII one.
func lowerWord(buf []byte, w string) []byte {
	for _, r := range w {
		if r == '’' {
			r = '\''
		}
		buf = utf8.AppendRune(buf, unicode.ToLower(r))
	}
	return buf
}

// contentWords are the words of s that carry topic: no stopwords, at least two runes,
// lightly stemmed so "flights" and "flight" meet.
func contentWords(s string) []string {
	var out []string
	for _, w := range words(s) {
		if stopwords[w] || utf8.RuneCountInString(w) < 2 {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

// stem strips a plural or possessive ending; a full stemmer would merge more forms but
// also make the tags and pattern statements harder to read.
func stem(w string) string {
	w = strings.TrimSuffix(w, "'s")
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		return w[:len(w)-1]
	}
	return w
}

func termFreq(ws []string) map[string]float64 {
	tf := make(map[string]float64, len(ws))
	for _, w := range ws {
		tf[w]++
	}
	return tf
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// cosine of two term-frequency vectors; 0 when either is empty.
func cosine(a, b map[string]float64) float64 {
	var dot, na, nb float64
	for _, k := range sortedKeys(a) {
		na += a[k] * a[k]
		dot += a[k] * b[k]
	}
	for _, k := range sortedKeys(b) {
		nb += b[k] * b[k]
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// LexicalSimilarity is the cosine of the content-word counts of a and b, in [0, 1]. It is
// the default similarity for topic shifts and episode clustering; an embedding cosine can
// be injected instead where one is configured.
func LexicalSimilarity(a, b string) float64 {
	return cosine(termFreq(contentWords(a)), termFreq(contentWords(b)))
}

// sentences splits s at '!', '?', newlines, and at '.' followed by a space or the end, so
// "3.5" and "v2.1" stay whole. Each sentence keeps its final punctuation (a question
// mark matters to the write gate).
func sentences(s string) []string {
	var out []string
	start := 0
	rs := []rune(s)
	emit := func(end int) {
		if t := strings.TrimSpace(string(rs[start:end])); t != "" {
			out = append(out, t)
		}
		start = end
	}
	for i, r := range rs {
		switch {
		case r == '\n':
			emit(i + 1)
		case r == '!' || r == '?' || r == ';':
			if i+1 == len(rs) || rs[i+1] == ' ' || rs[i+1] == '\n' {
				emit(i + 1)
			}
		case r == '.':
			if i+1 == len(rs) || unicode.IsSpace(rs[i+1]) {
				emit(i + 1)
			}
		}
	}
	emit(len(rs))
	return out
}

// EstimateTokens estimates the tokens of s at charsPerToken characters (runes) per token,
// rounded up: ~4 for English with GPT-style tokenizers. It is an estimate for budgets,
// not a tokenizer.
func EstimateTokens(s string, charsPerToken int) int {
	if charsPerToken <= 0 {
		charsPerToken = 4
	}
	n := utf8.RuneCountInString(s)
	return (n + charsPerToken - 1) / charsPerToken
}

// entities returns capitalised words and runs of them ("New York") that do not start a
// sentence, plus sentence-initial ones seen capitalised elsewhere, in first-seen order.
func entities(texts []string, limit int) []string {
	inner := map[string]bool{}
	var order []string
	var initial []string
	for _, t := range texts {
		for _, s := range sentences(t) {
			for i, e := range capitalRuns(s) {
				if i == 0 && e.first {
					initial = append(initial, e.text)
					continue
				}
				if !inner[e.text] {
					inner[e.text] = true
					order = append(order, e.text)
				}
			}
		}
	}
	// A sentence-initial run counts when it has several words ("New York is big") or the
	// same word shows up capitalised mid-sentence too; a lone capitalised first word is
	// usually just grammar.
	for _, e := range initial {
		if !inner[e] && strings.Contains(e, " ") {
			inner[e] = true
			order = append(order, e)
		}
	}
	if len(order) > limit {
		order = order[:limit]
	}
	return order
}

type capRun struct {
	text  string
	first bool // starts at the sentence's first word
}

// capitalRuns finds runs of capitalised words in a sentence, skipping "I" and stopwords.
func capitalRuns(s string) []capRun {
	var out []capRun
	var cur []string
	curFirst := false
	flush := func() {
		if len(cur) > 0 {
			out = append(out, capRun{text: strings.Join(cur, " "), first: curFirst})
		}
		cur = nil
	}
	for i, f := range strings.Fields(s) {
		w := strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
		r, _ := utf8.DecodeRuneInString(w)
		if w == "" || !unicode.IsUpper(r) || w == "I" || stopwords[strings.ToLower(w)] || calendarWords[strings.ToLower(w)] {
			flush()
			continue
		}
		if len(cur) == 0 {
			curFirst = i == 0
		}
		cur = append(cur, w)
		if strings.ContainsAny(f[len(f)-1:], ",.;:!?") {
			flush()
		}
	}
	flush()
	return out
}

// topTerms returns up to k content words of texts by frequency, ties alphabetical.
// topTerms returns the k most frequent content terms, counted by stem, each written as its first surface
// form: tags carry the words people wrote ("paris"), not the stemmer's ("pari").
func topTerms(texts []string, k int) []string {
	tf := map[string]float64{}
	surface := map[string]string{}
	for _, t := range texts {
		for _, w := range words(t) {
			if stopwords[w] || utf8.RuneCountInString(w) < 2 {
				continue
			}
			st := stem(w)
			if _, ok := surface[st]; !ok {
				surface[st] = strings.TrimSuffix(w, "'s")
			}
			tf[st]++
		}
	}
	ks := sortedKeys(tf)
	sort.SliceStable(ks, func(i, j int) bool { return tf[ks[i]] > tf[ks[j]] })
	if len(ks) > k {
		ks = ks[:k]
	}
	for i, st := range ks {
		ks[i] = surface[st]
	}
	return ks
}

func clamp01(v float64) float64 { return math.Max(0, math.Min(1, v)) }
