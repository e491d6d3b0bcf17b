package consolidation

import (
	"math"
	"sort"
	"strings"
	"unicode/utf8"
)

// weighted is a candidate sentence for an extractive summary.
type weighted struct {
	text   string
	weight float64 // multiplies the sentence's score (e.g. user sentences count more)
}

// summarize picks whole sentences by centrality until maxChars runes are used and returns
// them in their original order. A sentence scores the summed frequency (over all
// candidates) of its distinct content words, divided by sqrt(distinct words + 1) so long
// sentences do not win by length alone. Duplicates are skipped. If even the best
// sentence is too long, it is cut at a word boundary and marked with "…".
func summarize(cands []weighted, maxChars int) string {
	tf := map[string]float64{}
	sets := make([][]string, len(cands))
	for i, c := range cands {
		sets[i] = distinct(contentWords(c.text))
		for _, w := range sets[i] {
			tf[w]++
		}
	}
	score := make([]float64, len(cands))
	for i, c := range cands {
		var s float64
		for _, w := range sets[i] {
			s += tf[w]
		}
		score[i] = c.weight * s / math.Sqrt(float64(len(sets[i])+1))
	}
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return score[order[a]] > score[order[b]] })
	return pick(cands, order, maxChars)
}

func pick(cands []weighted, order []int, maxChars int) string {
	chosen := make([]bool, len(cands))
	seen := map[string]bool{}
	used := 0
	for _, i := range order {
		t := strings.TrimSpace(cands[i].text)
		key := strings.ToLower(t)
		n := utf8.RuneCountInString(t)
		if t == "" || seen[key] || used+n > maxChars {
			continue
		}
		seen[key] = true
		chosen[i] = true
		used += n + 1
	}
	var parts []string
	for i, c := range cands {
		if chosen[i] {
			parts = append(parts, strings.TrimSpace(c.text))
		}
	}
	if len(parts) == 0 && len(order) > 0 {
		return truncate(strings.TrimSpace(cands[order[0]].text), maxChars)
	}
	return strings.Join(parts, " ")
}

// truncate cuts s to at most maxChars runes at a word boundary, adding "…".
func truncate(s string, maxChars int) string {
	if utf8.RuneCountInString(s) <= maxChars {
		return s
	}
	if maxChars < 2 {
		return string([]rune(s)[:maxChars])
	}
	cut := string([]rune(s)[:maxChars-1])
	if i := strings.LastIndexByte(cut, ' '); i > maxChars/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}

func distinct(ws []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range ws {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}
