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
	re    *regexp.Regexp
	stems [][]byte // lower-case substrings one of which every match contains
}

func newKeywords(expr string, stems ...string) keywords {
	k := keywords{re: regexp.MustCompile(expr)}
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
		if bytes.Contains(lower, st) {
			return k.re.MatchString(s)
		}
	}
	return false
}
