package embed

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// bertNormalizer mirrors HuggingFace's BertNormalizer, in its order: clean
// control characters, space out CJK ideographs, strip accents, lowercase.
func bertNormalizer(clean, chinese, strip, lower bool) func(string) string {
	return func(s string) string {
		if clean || chinese {
			var b strings.Builder
			for _, r := range s {
				switch {
				case clean && (r == 0 || r == 0xfffd || isControl(r)):
				case clean && isBertSpace(r):
					b.WriteByte(' ')
				case chinese && isCJK(r):
					b.WriteByte(' ')
					b.WriteRune(r)
					b.WriteByte(' ')
				default:
					b.WriteRune(r)
				}
			}
			s = b.String()
		}
		if strip {
			s = removeMarks(norm.NFD.String(s))
		}
		if lower {
			s = strings.ToLower(s)
		}
		return s
	}
}

// removeMarks drops non-spacing marks: after NFD, "café" becomes "cafe".
func removeMarks(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, s)
}

func isBertSpace(r rune) bool { return r == '\t' || r == '\n' || r == '\r' || unicode.IsSpace(r) }

func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	// Category C*, including unassigned code points (Cn), which no table lists.
	return unicode.In(r, unicode.C) || !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

// isCJK is BERT's "Chinese character" test: the CJK Unified Ideograph blocks.
func isCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF || r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F || r >= 0x2B740 && r <= 0x2B81F || r >= 0x2B820 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF || r >= 0x2F800 && r <= 0x2FA1F
}

// isBertPunct is ASCII punctuation (which includes $, +, <, =, >, ^, `, |, ~)
// or any Unicode P* character.
func isBertPunct(r rune) bool {
	if r < 0x80 {
		return r >= 33 && r <= 47 || r >= 58 && r <= 64 || r >= 91 && r <= 96 || r >= 123 && r <= 126
	}
	return unicode.IsPunct(r)
}

// bertSplit splits on whitespace (dropped) and punctuation (kept, one per word).
func bertSplit(s string) []string {
	var words []string
	start := -1
	for i, r := range s {
		switch {
		case isBertSpace(r) || isBertPunct(r):
			if start >= 0 {
				words = append(words, s[start:i])
				start = -1
			}
			if !isBertSpace(r) {
				words = append(words, string(r))
			}
		case start < 0:
			start = i
		}
	}
	if start >= 0 {
		words = append(words, s[start:])
	}
	return words
}

// whitespaceSplitWords is the Whitespace pre-tokeniser, \w+|[^\w\s]+.
func whitespaceSplitWords(s string) []string {
	class := func(r rune) int {
		switch {
		case unicode.IsSpace(r):
			return 0
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || unicode.Is(unicode.Pc, r):
			return 1
		}
		return 2
	}
	var words []string
	start, cur := 0, 0
	for i, r := range s {
		c := class(r)
		if c != cur {
			if cur != 0 {
				words = append(words, s[start:i])
			}
			start, cur = i, c
		}
	}
	if cur != 0 {
		words = append(words, s[start:])
	}
	return words
}
