package consolidation

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// wordsByRune is the plain definition words must keep: replace '’', then split runs of letters, digits and
// apostrophes, lower-cased, trimmed of apostrophes.
func wordsByRune(s string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if w := strings.Trim(b.String(), "'"); w != "" {
			out = append(out, w)
		}
		b.Reset()
	}
	for _, r := range strings.ReplaceAll(s, "’", "'") {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' {
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		flush()
	}
	flush()
	return out
}

// randomText draws from pieces that stress the word rules: cases, digits, both apostrophes, non-ASCII letters
// and digits, punctuation and an invalid byte.
func randomText(rng *rand.Rand) string {
	pieces := []string{"I", "don't", "Don’t", "’tis", "it's'", "''", "Café", "ÉCOLE", "straße", "ΣΊΣΥΦΟΣ", "٣٤",
		"v2.1", "3.5", "e-mail", " ", "  ", ",", ".", "!", "?", "\n", "\t", "\xff", "booked", "BOOKED", "remember",
		"Don't forget", "do not forget", "crashed", "bugs", "debug", "error:", "ſigned", "\u212aeep", "naïve", "x",
		"planning to", "Planning To", "plan", "if", "IF", "life", "today", "This Week", "this", "week", "atm", "ATM",
		"Well,", "well", "so", "So:", "And", "by the way", "just so you know", "Uh", "\t", "\r\n", "\f", "\v", "hmm"}
	var b strings.Builder
	for n := rng.IntN(12); n >= 0; n-- {
		b.WriteString(pieces[rng.IntN(len(pieces))])
		if rng.IntN(3) == 0 {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func TestWordsKeepsTheRuneDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < 20000; i++ {
		s := randomText(rng)
		if got, want := words(s), wordsByRune(s); !slices.Equal(got, want) {
			t.Fatalf("words(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestKeywordsAnswerAsTheirRegexp(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	matched := 0
	for i := 0; i < 20000; i++ {
		s := randomText(rng)
		if got, want := collapseSpace(s), regexp.MustCompile(`\s+`).ReplaceAllString(s, " "); got != want {
			t.Fatalf("collapseSpace(%q) = %q, want %q", s, got, want)
		}
		if got, want := fillerRe.ReplaceAllString(s, ""), fillerRe.re.ReplaceAllString(s, ""); got != want {
			t.Fatalf("fillers of %q: %q, the regexp gives %q", s, got, want)
		}
		for _, k := range []keywords{salientRe, troubleRe, transientTimeRe, hedgeRe, fillerRe} {
			got, want := k.MatchString(s), k.re.MatchString(s)
			if got != want {
				t.Fatalf("%q against %s: %v, the regexp says %v", s, k.re, got, want)
			}
			if got {
				matched++
			}
		}
	}
	if matched < 5000 {
		t.Fatalf("only %d matches: the texts do not exercise the words", matched)
	}
}
