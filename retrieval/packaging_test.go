package retrieval

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/memory"
)

func packEvidence() []Evidence {
	day := func(d, h int) time.Time { return time.Date(2026, 3, d, h, 0, 0, 0, time.UTC) }
	return []Evidence{
		{ID: "w1", Type: memory.Working, Text: "User is planning the Lisbon trip in this run.", Score: 0.7, Time: day(11, 14)},
		{ID: "f1", Type: memory.Semantic, Text: "Alice lives in Lisbon.", Score: 0.9, Confidence: 0.82, Time: day(5, 9), Tier: "cold", FactStatus: "current"},
		{ID: "f2", Type: memory.Semantic, Text: "Alice works at a bakery.", Score: 0.5, Confidence: 0.6, Tier: "hot"},
		{ID: "f3", Type: memory.Semantic, Text: "Alice lived in Porto.", Score: 0.3, Confidence: 0.7, FactStatus: "superseded"},
		{ID: "e1", Type: memory.Episodic, Text: "Met Alice at the pastry shop near the tram stop. We talked for an hour about her move. She showed me the new apartment, which has a small balcony facing the river and gets sun all afternoon. Then we had dinner.", Score: 0.95, Time: day(6, 19), Tier: "hot"},
		{ID: "e2", Type: memory.Episodic, Text: "Called   Alice\nabout the flights.", Score: 0.6, Time: day(8, 10)},
		{ID: "e3", Type: memory.Episodic, Text: "Bought a guidebook.", Score: 0.2, Time: day(1, 10)},
		{ID: "e2", Type: memory.Episodic, Text: "duplicate id", Score: 0.1},
		{ID: "p1", Type: memory.Perceptual, Text: "Slept 6.5 h on average this week, below the usual 7.4 h.", Score: 0.4, Time: day(9, 7)},
		{ID: "x1", Type: "", Text: "Untyped memory about Alice.", Score: 0.25},
	}
}

func itemIDs(c Context) []string {
	var ids []string
	for _, b := range c.Blocks {
		for _, it := range b.Items {
			ids = append(ids, it.ID)
		}
	}
	return ids
}

func TestPackageLargeBudgetKeepsAllInOrder(t *testing.T) {
	plan := PlanQuery("Where does Alice live?", planNow, EntitySet{"alice": true})
	c := Package(plan, packEvidence(), 1000, nil)
	t.Logf("\n%s", c)
	if got, want := itemIDs(c), []string{"w1", "f1", "f2", "f3", "e1", "e2", "x1", "e3", "p1"}; !slices.Equal(got, want) {
		t.Fatalf("items %v, want %v", got, want)
	}
	var titles []string
	for _, b := range c.Blocks {
		titles = append(titles, b.Title)
	}
	if want := []string{"Working context", "Facts", "Episodes", "Perceptual summaries"}; !slices.Equal(titles, want) {
		t.Fatalf("blocks %v", titles)
	}
	if !reflect.DeepEqual(c.LeftOut, []LeftOut{{"e2", ReasonDuplicate}}) {
		t.Fatalf("left out %v", c.LeftOut)
	}
	s := c.String()
	for _, want := range []string{
		"## Facts\n- Alice lives in Lisbon. (2026-03-05, confidence 0.82, cold)\n",
		"- Alice lived in Porto. (confidence 0.70, superseded)\n",
		"- User is planning the Lisbon trip in this run. (2026-03-11 14:00, relevance 0.70)\n",
		"- Called Alice about the flights. (2026-03-08, relevance 0.60)\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("context lacks %q", want)
		}
	}
	if c.Tokens > 1000 || DefaultEstimate(s) > c.Tokens {
		t.Fatalf("tokens %d, estimate of text %d", c.Tokens, DefaultEstimate(s))
	}
}

func TestPackageSmallBudgets(t *testing.T) {
	plan := PlanQuery("Where does Alice live?", planNow, EntitySet{"alice": true})
	for _, budget := range []int{200, 50} {
		c := Package(plan, packEvidence(), budget, nil)
		t.Logf("budget %d: %d tokens, left out %v\n%s", budget, c.Tokens, c.LeftOut, c)
		if c.Tokens > budget || DefaultEstimate(c.String()) > budget {
			t.Fatalf("budget %d: %d tokens", budget, c.Tokens)
		}
	}
	// 200: the least relevant item goes.
	c := Package(plan, packEvidence(), 200, nil)
	if got, want := itemIDs(c), []string{"w1", "f1", "f2", "f3", "e1", "e2", "x1", "p1"}; !slices.Equal(got, want) {
		t.Errorf("200: items %v, want %v", got, want)
	}
	if want := []LeftOut{{"e3", ReasonOverBudget}, {"e2", ReasonDuplicate}}; !reflect.DeepEqual(c.LeftOut, want) {
		t.Errorf("200: left out %v, want %v", c.LeftOut, want)
	}
	// 50: the most relevant item, a long episode, is cut after its second sentence and fills most of the room;
	// the next ones do not fit what is left, the short untyped one does.
	c = Package(plan, packEvidence(), 50, nil)
	if got, want := itemIDs(c), []string{"e1", "x1"}; !slices.Equal(got, want) {
		t.Errorf("50: items %v, want %v", got, want)
	}
	e1 := findItem(c, "e1")
	if e1 == nil || e1.Text != "Met Alice at the pastry shop near the tram stop. We talked for an hour about her move. …" ||
		!slices.Contains(c.LeftOut, LeftOut{"e1", ReasonTruncated}) || !slices.Contains(c.LeftOut, LeftOut{"f1", ReasonOverBudget}) {
		t.Fatalf("50: %+v %v", e1, c.LeftOut)
	}
}

func findItem(c Context, id string) *ContextItem {
	for _, b := range c.Blocks {
		for i := range b.Items {
			if b.Items[i].ID == id {
				return &b.Items[i]
			}
		}
	}
	return nil
}

func TestPackageCutsAtWordsWhenNoSentenceFits(t *testing.T) {
	ev := []Evidence{{ID: "long", Type: memory.Episodic, Score: 0.9,
		Text: strings.Repeat("word ", 60) + "end. Another sentence follows here."}}
	c := Package(QueryPlan{}, ev, 30, nil)
	it := findItem(c, "long")
	if it == nil || !it.Truncated || !strings.HasSuffix(it.Text, "word …") || c.Tokens > 30 {
		t.Fatalf("%+v, %d tokens\n%s", it, c.Tokens, c)
	}
	if c := Package(QueryPlan{}, ev, 5, nil); len(c.Blocks) != 0 || !reflect.DeepEqual(c.LeftOut, []LeftOut{{"long", ReasonOverBudget}}) {
		t.Fatalf("budget 5: %+v", c)
	}
	if c := Package(QueryPlan{}, ev, 0, nil); len(c.Blocks) != 0 || c.Tokens != 0 {
		t.Fatalf("budget 0: %+v", c)
	}
}

// TestPackageNeverExceedsBudget packages random evidence under random budgets, with the default estimate and a
// word-count one: the counted tokens never exceed the budget (and, for the default, neither does the estimate of
// the whole text); every item is in, cut or listed; an item is left out only when it did not fit the room the
// more relevant items left; blocks are in order and sorted by score. The seeds are the loop index: a failure
// names its seed.
func TestPackageNeverExceedsBudget(t *testing.T) {
	words := func(s string) int { return len(strings.Fields(s)) + 1 }
	tally := map[string]int{}
	defer func() {
		t.Logf("outcomes over all runs: %v", tally)
		if tally[ReasonTruncated] == 0 || tally[ReasonOverBudget] == 0 || tally[ReasonDuplicate] == 0 || tally["in"] == 0 {
			t.Errorf("the random cases do not exercise every outcome: %v", tally)
		}
	}()
	for seed := range uint64(400) {
		rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
		ev := randomEvidence(rng)
		budget := rng.IntN(1200) - 10
		plan := QueryPlan{}
		if seed%2 == 1 { // a one-day range: times shown with the hour
			plan = PlanQuery("what did I do yesterday", planNow, nil)
		}
		for name, est := range map[string]func(string) int{"default": nil, "words": words} {
			c := Package(plan, ev, budget, est)
			if err := checkPackage(plan, c, ev, budget, est); err != nil {
				t.Fatalf("seed %d, budget %d, estimate %s: %v\n%s", seed, budget, name, err, c)
			}
			for _, l := range c.LeftOut {
				tally[l.Reason]++
			}
			tally["in"] += len(itemIDs(c))
			if again := Package(plan, ev, budget, est); !reflect.DeepEqual(again, c) {
				t.Fatalf("seed %d: not deterministic", seed)
			}
		}
	}
}

var randWords = strings.Fields(`alice bob lisbon porto tram pastry river sleep steps café naïve 東京 über résumé the a of and
	walked talked bought visited apartment balcony marathon dinner`)

func randomEvidence(rng *rand.Rand) []Evidence {
	types := []memory.Type{memory.Working, memory.Semantic, memory.Episodic, memory.Perceptual, "", "odd"}
	n := rng.IntN(25)
	ev := make([]Evidence, n)
	for i := range ev {
		var b strings.Builder
		for s := rng.IntN(6); s >= 0; s-- {
			for w := rng.IntN(30) + 1; w > 0; w-- {
				b.WriteString(randWords[rng.IntN(len(randWords))])
				b.WriteString([]string{" ", " ", " ", "  ", "\n"}[rng.IntN(5)])
			}
			b.WriteString([]string{". ", "! ", "? ", `." `, "; "}[rng.IntN(5)])
		}
		id := fmt.Sprintf("m%02d", i)
		if i > 0 && rng.IntN(10) == 0 {
			id = ev[rng.IntN(i)].ID
		}
		ev[i] = Evidence{ID: id, Type: types[rng.IntN(len(types))], Text: b.String(), Score: float64(rng.IntN(100)) / 100,
			Confidence: float64(rng.IntN(3)) / 2, Tier: []string{"", "hot", "cold"}[rng.IntN(3)]}
		if rng.IntN(2) == 0 {
			ev[i].Time = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.IntN(1e6)) * time.Minute)
		}
	}
	return ev
}

func checkPackage(plan QueryPlan, c Context, ev []Evidence, budget int, est func(string) int) error {
	if est == nil {
		est = DefaultEstimate
		if n := est(c.String()); n > c.Tokens {
			return fmt.Errorf("text estimates %d tokens, counted %d", n, c.Tokens)
		}
	}
	if c.Tokens > max(budget, 0) {
		return fmt.Errorf("%d tokens over budget", c.Tokens)
	}
	sum, last := 0, -1
	in := map[string]bool{}
	for _, b := range c.Blocks {
		i := -1
		for k, o := range blockOrder {
			if o.t == b.Type {
				i = k
			}
		}
		if i <= last || len(b.Items) == 0 {
			return fmt.Errorf("block %s out of order or empty", b.Type)
		}
		last = i
		sum += est(blockHeader(b.Type))
		for j, it := range b.Items {
			if j > 0 && it.Score > b.Items[j-1].Score {
				return fmt.Errorf("block %s not sorted by score", b.Type)
			}
			if in[it.ID] {
				return fmt.Errorf("%s twice", it.ID)
			}
			in[it.ID] = true
			if n := est(itemLine(it.Text, it.Cue)); n != it.Tokens {
				return fmt.Errorf("%s: %d tokens, counted %d", it.ID, n, it.Tokens)
			}
			sum += it.Tokens
			if it.Truncated && !strings.HasSuffix(it.Text, " …") {
				return fmt.Errorf("%s cut without an ellipsis", it.ID)
			}
		}
	}
	if sum != c.Tokens {
		return fmt.Errorf("lines sum to %d tokens, counted %d", sum, c.Tokens)
	}
	if err := checkDropOrder(plan, c, ev, budget, est); err != nil {
		return err
	}
	left := map[string][]string{}
	for _, l := range c.LeftOut {
		left[l.ID] = append(left[l.ID], l.Reason)
	}
	for _, e := range ev {
		switch {
		case in[e.ID] && (findTruncated(c, e.ID) != slices.Contains(left[e.ID], ReasonTruncated)):
			return fmt.Errorf("%s: cut and listed disagree", e.ID)
		case !in[e.ID] && !slices.Contains(left[e.ID], ReasonOverBudget):
			return fmt.Errorf("%s missing and not listed", e.ID)
		}
	}
	return nil
}

func findTruncated(c Context, id string) bool {
	it := findItem(c, id)
	return it != nil && it.Truncated
}

// checkDropOrder replays the relevance order: every item left out over budget did not fit, whole, in the room
// the items before it (more relevant, and in) left.
func checkDropOrder(plan QueryPlan, c Context, ev []Evidence, budget int, est func(string) int) error {
	order := slices.Clone(ev)
	slices.SortStableFunc(order, func(a, b Evidence) int {
		if a.Score != b.Score {
			return cmpDesc(a.Score, b.Score)
		}
		return strings.Compare(a.ID, b.ID)
	})
	used, open, seen := 0, map[memory.Type]bool{}, map[string]bool{}
	for _, e := range order {
		if seen[e.ID] {
			continue
		}
		seen[e.ID] = true
		t := blockType(e.Type)
		head := 0
		if !open[t] {
			head = est(blockHeader(t))
		}
		if it := findItem(c, e.ID); it != nil {
			used += head + it.Tokens
			open[t] = true
			continue
		}
		whole := est(itemLine(strings.Join(strings.Fields(e.Text), " "), cueOf(plan, &e)))
		if used+head+whole <= budget {
			return fmt.Errorf("%s left out, but fitted whole (%d + %d + %d <= %d)", e.ID, used, head, whole, budget)
		}
	}
	return nil
}
