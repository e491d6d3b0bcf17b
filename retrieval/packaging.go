package retrieval

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memcluster/memcluster/consolidation"
	"github.com/memcluster/memcluster/memory"
)

// Why an item is not in a Context, or not whole.
const (
	ReasonOverBudget = "over budget" // left out: it did not fit, even cut short
	ReasonTruncated  = "truncated"   // in, but cut at a sentence (or word) boundary with an ellipsis
	ReasonDuplicate  = "duplicate"   // left out: an item with the same id came first
)

// Context is the evidence packaged for a model's prompt: blocks in a fixed order, each item with its time and a
// confidence cue, fitted to a token budget.
type Context struct {
	Blocks []ContextBlock `json:"blocks"`
	// Tokens is the estimate of the whole rendered context (String); never more than Budget.
	Tokens  int       `json:"tokens"`
	Budget  int       `json:"budget"`
	LeftOut []LeftOut `json:"left_out,omitempty"`
}

// ContextBlock is one memory type's items, most relevant first.
type ContextBlock struct {
	Type  memory.Type   `json:"type"`
	Title string        `json:"title"`
	Items []ContextItem `json:"items"`
}

// ContextItem is one piece of evidence as it goes into the prompt.
type ContextItem struct {
	ID        string  `json:"id"`
	Text      string  `json:"text"` // whitespace collapsed; cut short when Truncated
	Cue       string  `json:"cue"`  // "2026-03-05, confidence 0.82, cold"
	Score     float64 `json:"score"`
	Truncated bool    `json:"truncated,omitempty"`
	Tokens    int     `json:"tokens"` // the estimate of its rendered line
}

// LeftOut names an item that is missing from the context or cut short, and why.
type LeftOut struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// blockOrder is the order of the blocks and their titles: the run's working context, then standing facts, then
// episodes, then perceptual summaries.
var blockOrder = []struct {
	t     memory.Type
	title string
}{
	{memory.Working, "Working context"},
	{memory.Semantic, "Facts"},
	{memory.Episodic, "Episodes"},
	{memory.Perceptual, "Perceptual summaries"},
}

// DefaultEstimate is the token estimate Package uses when given none: ceil(runes/4), as in consolidation.
func DefaultEstimate(s string) int { return consolidation.EstimateTokens(s, 4) }

// minWordCut is the fewest words an item keeps when it has to be cut inside its first sentence; less says
// nothing useful.
const minWordCut = 5

// Package fits evidence into budget tokens as estimated by est (nil: DefaultEstimate). Items are taken most
// relevant first (score, then id); one that does not fit whole is cut to the longest run of whole sentences
// that fits (else to at least minWordCut words) with an ellipsis, else left out, so the least relevant items
// are the first to go. The estimate of each rendered line (its newline included) is counted, block titles
// included, and the sum never exceeds budget; with an estimate like ceil(runes/n) the estimate of the whole
// String is at most that sum. plan chooses how times are shown: with the hour when the query's range spans two
// days or less, in the range's location.
func Package(plan QueryPlan, evidence []Evidence, budget int, est func(string) int) Context {
	if est == nil {
		est = DefaultEstimate
	}
	c := Context{Budget: budget}
	order := make([]int, len(evidence))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ea, eb := &evidence[a], &evidence[b]
		return cmp.Or(cmpDesc(ea.Score, eb.Score), strings.Compare(ea.ID, eb.ID))
	})
	blocks := map[memory.Type]*ContextBlock{}
	seen := map[string]bool{}
	for _, i := range order {
		e := &evidence[i]
		if seen[e.ID] {
			c.LeftOut = append(c.LeftOut, LeftOut{e.ID, ReasonDuplicate})
			continue
		}
		seen[e.ID] = true
		t := blockType(e.Type)
		head := 0
		if blocks[t] == nil {
			head = est(blockHeader(t))
		}
		item, ok := fitItem(e, cueOf(plan, e), budget-c.Tokens-head, est)
		if !ok {
			c.LeftOut = append(c.LeftOut, LeftOut{e.ID, ReasonOverBudget})
			continue
		}
		if item.Truncated {
			c.LeftOut = append(c.LeftOut, LeftOut{e.ID, ReasonTruncated})
		}
		if blocks[t] == nil {
			blocks[t] = &ContextBlock{Type: t, Title: blockTitle(t)}
		}
		blocks[t].Items = append(blocks[t].Items, item)
		c.Tokens += head + item.Tokens
	}
	for _, b := range blockOrder {
		if blk := blocks[b.t]; blk != nil {
			c.Blocks = append(c.Blocks, *blk)
		}
	}
	return c
}

// String renders the context: each block's title line, then its items, one line each.
func (c Context) String() string {
	var b strings.Builder
	for _, blk := range c.Blocks {
		b.WriteString(blockHeader(blk.Type))
		for _, it := range blk.Items {
			b.WriteString(itemLine(it.Text, it.Cue))
		}
	}
	return b.String()
}

func blockType(t memory.Type) memory.Type {
	switch t {
	case memory.Working, memory.Semantic, memory.Perceptual:
		return t
	}
	return memory.Episodic // "" and anything unknown: the default type
}

func blockTitle(t memory.Type) string {
	for _, b := range blockOrder {
		if b.t == t {
			return b.title
		}
	}
	return string(t)
}

func blockHeader(t memory.Type) string { return "## " + blockTitle(t) + "\n" }

func itemLine(text, cue string) string {
	if cue == "" {
		return "- " + text + "\n"
	}
	return "- " + text + " (" + cue + ")\n"
}

// cueOf is what the model is told about an item besides its text: when, how sure, from which tier, and a fact's
// status when it is no longer believed.
func cueOf(plan QueryPlan, e *Evidence) string {
	var parts []string
	if !e.Time.IsZero() {
		t, layout := e.Time, "2006-01-02"
		if plan.Time != nil {
			t = t.In(plan.Time.From.Location())
			if plan.Time.To.Sub(plan.Time.From) <= 49*time.Hour { // two days, and a daylight saving hour
				layout = "2006-01-02 15:04"
			}
		}
		if e.Type == memory.Working {
			layout = "2006-01-02 15:04"
		}
		parts = append(parts, t.Format(layout))
	}
	if e.Confidence > 0 {
		parts = append(parts, fmt.Sprintf("confidence %.2f", clamp01(e.Confidence)))
	} else {
		parts = append(parts, fmt.Sprintf("relevance %.2f", clamp01(e.Score)))
	}
	if e.Tier != "" {
		parts = append(parts, e.Tier)
	}
	if !e.current() {
		parts = append(parts, e.FactStatus)
	}
	return strings.Join(parts, ", ")
}

// fitItem renders e whole if its line costs at most room tokens, else cut short; ok is false when not even a
// cut version fits.
func fitItem(e *Evidence, cue string, room int, est func(string) int) (ContextItem, bool) {
	text := strings.Join(strings.Fields(e.Text), " ")
	it := ContextItem{ID: e.ID, Cue: cue, Score: e.Score, Text: text}
	if room <= 0 {
		return it, false
	}
	if n := est(itemLine(text, cue)); n <= room {
		it.Tokens = n
		return it, true
	}
	fits := func(cut int) (int, bool) {
		n := est(itemLine(text[:cut]+" …", cue))
		return n, n <= room
	}
	cut, n := longestFit(sentenceCuts(text), fits)
	if cut == 0 {
		words := wordCuts(text)
		if len(words) >= minWordCut {
			cut, n = longestFit(words[minWordCut-1:], fits)
		}
	}
	if cut == 0 {
		return it, false
	}
	it.Text, it.Tokens, it.Truncated = text[:cut]+" …", n, true
	return it, true
}

// longestFit returns the largest cut (cuts ascend) that fits, by binary search: estimates grow with length, and
// only a cut that was checked to fit is ever returned, so a non-monotone estimate can cost a shorter cut but
// never the budget. 0 when none fits.
func longestFit(cuts []int, fits func(int) (int, bool)) (cut, tokens int) {
	lo, hi := 0, len(cuts)-1
	for lo <= hi {
		mid := (lo + hi) / 2
		if n, ok := fits(cuts[mid]); ok {
			cut, tokens = cuts[mid], n
			lo = mid + 1
		} else {
			hi = mid - 1
		}
	}
	return cut, tokens
}

// sentenceCuts are the byte offsets just after each sentence end (., ! or ?, with any closing quotes or
// brackets) that is followed by a space, ascending. The text's end is not one: the whole text did not fit.
func sentenceCuts(text string) []int {
	var cuts []int
	for i := 0; i < len(text); i++ {
		if text[i] != '.' && text[i] != '!' && text[i] != '?' {
			continue
		}
		j := i + 1
		for j < len(text) && strings.ContainsRune(`"')]`, rune(text[j])) {
			j++
		}
		if j < len(text) && text[j] == ' ' {
			cuts = append(cuts, j)
		}
	}
	return cuts
}

// wordCuts are the byte offsets of the spaces between words (the text's whitespace is already single spaces);
// the k-th cut keeps k words.
func wordCuts(text string) []int {
	var cuts []int
	for i := 0; i < len(text); i++ {
		if text[i] == ' ' {
			cuts = append(cuts, i)
		}
	}
	return cuts
}
