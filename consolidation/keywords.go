package consolidation

import (
	"bytes"
	"regexp"
	"unicode/utf8"
)

// keywords is a case-insensitive word-list regexp with a cheap refusal in front of it. Go's regexp tries a
// case-insensitive alternation at every position of a text, and most messages hold none of the words: a text
// that is ASCII and holds none of them, in any letter case, cannot match, so it is refused without the
// regexp. Anything else (a candidate, or a text with non-ASCII runes, where case folding reaches beyond
// ASCII) goes to the regexp, which alone decides a match.
type keywords struct {
	re       *regexp.Regexp
	stems    [][]byte // lower-case substrings one of which every match contains
	anchored bool     // every match starts the text, so with one of the stems
}

func newKeywords(expr string, stems ...string) keywords {
	return newKeywordsAt(false, expr, stems...)
}

// newPrefixes is newKeywords for an expression anchored at the text's start.
func newPrefixes(expr string, stems ...string) keywords {
	return newKeywordsAt(true, expr, stems...)
}

func newKeywordsAt(anchored bool, expr string, stems ...string) keywords {
	k := keywords{re: regexp.MustCompile(expr), anchored: anchored}
	for _, st := range stems {
		k.stems = append(k.stems, []byte(st))
	}
	return k
}

// MatchString is k.re.MatchString(s).
func (k keywords) MatchString(s string) bool {
	var small [512]byte
	lower := small[:0]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return k.re.MatchString(s)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower = append(lower, c)
	}
	for _, st := range k.stems {
		if k.anchored && bytes.HasPrefix(lower, st) || !k.anchored && bytes.Contains(lower, st) {
			return k.re.MatchString(s)
		}
	}
	return false
}

// ReplaceAllString is k.re.ReplaceAllString(s, repl), s itself when nothing matches.
func (k keywords) ReplaceAllString(s, repl string) string {
	if !k.MatchString(s) {
		return s
	}
	return k.re.ReplaceAllString(s, repl)
}

// collapseSpace replaces each run of the regexp class \s ([\t\n\f\r ]) with one space, as
// regexp.MustCompile(`\s+`).ReplaceAllString(s, " ") does, returning s itself when it has no such run.
func collapseSpace(s string) string {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		clean = !isSpace(s[i]) || s[i] == ' ' && (i+1 == len(s) || !isSpace(s[i+1]))
	}
	if clean {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if !isSpace(s[i]) {
			b = append(b, s[i])
			continue
		}
		b = append(b, ' ')
		for i+1 < len(s) && isSpace(s[i+1]) {
			i++
		}
	}
	return string(b)
}
