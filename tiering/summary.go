package tiering

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memcluster/memcluster/memory"
)

// An archive's summary is extractive: whole sentences of its items, chosen greedily for coverage. A term's
// weight is the number of items it occurs in (what recurs in a month is what the month was about); a
// sentence's gain is the weight of the terms it adds that no chosen sentence has yet, over the square root
// of its term count (so long sentences do not win by length), scaled by 1 + the item's importance. The
// chosen sentences are printed in the order they occurred. Ties go to the earlier sentence, so the summary
// depends only on the items.

type sentence struct {
	item, idx  int
	text       string
	terms      []string
	importance float64
}

// summarize returns at most maxChars runes of the most informative sentences of items.
func summarize(items []memory.Memory, maxChars int) string {
	sents := splitAll(items)
	df, last := map[string]int{}, map[string]int{} // last: 1 + the last item a term was counted for
	for _, s := range sents {
		for _, t := range s.terms {
			if last[t] != s.item+1 {
				last[t] = s.item + 1
				df[t]++
			}
		}
	}
	return render(pick(sents, df, maxChars), maxChars)
}

func pick(sents []sentence, df map[string]int, maxChars int) []sentence {
	covered := map[string]bool{}
	used := make([]bool, len(sents))
	var chosen []sentence
	left := maxChars
	for {
		best, bestGain := -1, 0.0
		for i, s := range sents {
			n := utf8.RuneCountInString(s.text)
			if used[i] || len(chosen) > 0 && n+1 > left {
				continue
			}
			if g := gain(s, df, covered); g > bestGain {
				best, bestGain = i, g
			}
		}
		if best < 0 {
			return chosen
		}
		used[best] = true
		chosen = append(chosen, sents[best])
		for _, t := range sents[best].terms {
			covered[t] = true
		}
		left -= utf8.RuneCountInString(sents[best].text) + 1
	}
}

func gain(s sentence, df map[string]int, covered map[string]bool) float64 {
	g := 0.0
	for _, t := range s.terms {
		if !covered[t] {
			g += float64(df[t])
		}
	}
	return g / math.Sqrt(float64(len(s.terms))) * (1 + s.importance)
}

func render(chosen []sentence, maxChars int) string {
	slices.SortFunc(chosen, func(a, b sentence) int { return cmp.Or(cmp.Compare(a.item, b.item), cmp.Compare(a.idx, b.idx)) })
	texts := make([]string, len(chosen))
	for i, s := range chosen {
		texts[i] = s.text
	}
	return truncate(strings.Join(texts, " "), maxChars)
}

// truncate cuts s to at most n runes, at a space if there is one, marking the cut with "…".
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:max(n-1, 0)]
	if i := strings.LastIndexByte(string(r), ' '); i > 0 {
		return string(r)[:i] + "…"
	}
	return string(r) + "…"
}

func splitAll(items []memory.Memory) []sentence {
	var out []sentence
	for i := range items {
		for j, text := range splitSentences(items[i].Text) {
			terms := contentTerms(text)
			if len(terms) > 0 {
				out = append(out, sentence{item: i, idx: j, text: text, terms: terms, importance: items[i].Importance})
			}
		}
	}
	return out
}

// splitSentences splits at '.', '!', '?' followed by a space or the end, and at line breaks; whitespace
// inside a sentence is collapsed.
func splitSentences(text string) []string {
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, " "))
			cur = cur[:0]
		}
	}
	for _, line := range strings.Split(text, "\n") {
		for _, w := range strings.Fields(line) {
			cur = append(cur, w)
			if strings.ContainsAny(w[len(w)-1:], ".!?") {
				flush()
			}
		}
		flush()
	}
	return out
}

// contentTerms are the distinct lower-case words of s that are not stop words, in order of appearance.
func contentTerms(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if utf8.RuneCountInString(w) < 2 || stopwords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// stopwords are English function words and conversational filler; they say nothing about a topic.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all also am an and any are as at be
		because been before being below between both but by can could did do does doing don down during each
		else even ever few for from further get got had has have having he her here hers herself him himself
		his how if in into is isn it its itself just let like me more most much must my myself no nor not now
		of off oh ok okay on once one only or other our ours ourselves out over own please really same she
		should so some such sure than thank thanks that the their theirs them themselves then there these they
		this those through to too under until up us very want was we were what when where which while who whom
		why will with would yeah yes you your yours yourself ll re ve didn doesn wasn weren won wouldn couldn
		shouldn isn aren hasn haven hadn`) {
		m[w] = true
	}
	return m
}()
