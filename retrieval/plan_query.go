package retrieval

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/memcluster/memcluster/memory"
)

// Intent is what kind of answer a query asks for; it decides which memory types are read, in which order.
type Intent string

// Intents.
const (
	IntentRecallEvent Intent = "recall_event" // something that happened: episodes first
	IntentFactLookup  Intent = "fact_lookup"  // a standing fact about the user or their world: facts first
	IntentPreference  Intent = "preference"   // likes, dislikes, favourites: facts first
	IntentMeasure     Intent = "measure"      // a state or measurement (sleep, heart rate, steps, weight): perceptual first
	IntentSummary     Intent = "summary"      // an overview of a period or topic: episodes, facts, then measurements
	IntentOther       Intent = "other"
)

// intentMemories is the order memory types are read in for each intent (working memory goes first when the
// plan is for a run: QueryPlan.WithRun).
var intentMemories = map[Intent][]memory.Type{
	IntentRecallEvent: {memory.Episodic, memory.Semantic},
	IntentFactLookup:  {memory.Semantic, memory.Episodic},
	IntentPreference:  {memory.Semantic, memory.Episodic},
	IntentMeasure:     {memory.Perceptual, memory.Episodic},
	IntentSummary:     {memory.Episodic, memory.Semantic, memory.Perceptual},
	IntentOther:       {memory.Semantic, memory.Episodic},
}

// KnownEntities answers whether a lower-cased name (words joined by single spaces, e.g. "new york") is one of
// the user's entities; the caller backs it with what it has (the semantic graph's entity keys, say).
type KnownEntities interface {
	HasEntity(key string) bool
}

// EntitySet is a KnownEntities over a set of lower-cased keys.
type EntitySet map[string]bool

// HasEntity reports whether key is in the set.
func (s EntitySet) HasEntity(key string) bool { return s[key] }

// EntityFunc adapts a function to KnownEntities.
type EntityFunc func(key string) bool

// HasEntity calls f.
func (f EntityFunc) HasEntity(key string) bool { return f(key) }

// QueryPlan is what PlanQuery understood of a query: what it asks for, about whom or what, when, and which
// memories to read. It is shown by --explain (String, or JSON through the field tags).
type QueryPlan struct {
	Query  string `json:"query"`
	Intent Intent `json:"intent"`
	// Cues are the words that decided the intent.
	Cues []string `json:"cues,omitempty"`
	// Entities are lower-cased: the user's known entities the query names, then capitalised names it uses.
	Entities []string `json:"entities,omitempty"`
	// Terms are the content words, without stop words, question frames ("remember", "tell") and the time
	// expression.
	Terms []string `json:"terms,omitempty"`
	// Time is the period the query names; nil when it names none.
	Time *TimeRange `json:"time,omitempty"`
	// Memories are the memory types to read, in order.
	Memories []memory.Type `json:"memories"`
	// Working is set when the plan is for a run (RunID): its working memory is read first.
	Working bool   `json:"working,omitempty"`
	RunID   string `json:"run_id,omitempty"`
}

// PlanQuery analyses a query. now anchors its time expression (in now's location); known may be nil. It is pure:
// the same inputs give the same plan.
func PlanQuery(query string, now time.Time, known KnownEntities) QueryPlan {
	p := QueryPlan{Query: query}
	rest, tr := blankTimeExprs(query, now, nil)
	p.Time = tr
	toks := nameTokens(rest)
	p.Intent, p.Cues = classify(nameTokens(query), p.Time != nil)
	p.Entities = findEntities(rest, toks, known)
	for _, t := range queryTerms(rest) {
		if !frameWords[t] {
			p.Terms = append(p.Terms, t)
		}
	}
	p.Memories = slices.Clone(intentMemories[p.Intent])
	return p
}

// blankTimeExprs finds the query's time expressions: the first is the query's range, and all of them are
// blanked out (same length, so offsets hold) before looking for names and terms: "March" is neither.
func blankTimeExprs(query string, now time.Time, loc *time.Location) (rest string, first *TimeRange) {
	rest = query
	for range maxTimeExprs {
		tr, i, ok := findTimeRange(rest, now, loc)
		if !ok {
			break
		}
		if first == nil {
			first = &tr
		}
		rest = rest[:i] + strings.Repeat(" ", len(tr.Expr)) + rest[i+len(tr.Expr):]
	}
	return rest, first
}

// WithRun returns the plan for a query made inside run runID: working memory is read first. An empty runID
// leaves the plan as it is.
func (p QueryPlan) WithRun(runID string) QueryPlan {
	if runID == "" || p.Working {
		return p
	}
	p.RunID, p.Working = runID, true
	p.Memories = append([]memory.Type{memory.Working}, slices.DeleteFunc(slices.Clone(p.Memories),
		func(t memory.Type) bool { return t == memory.Working })...)
	return p
}

// String is the plan for --explain, one part per line.
func (p QueryPlan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "intent: %s", p.Intent)
	if len(p.Cues) > 0 {
		fmt.Fprintf(&b, " (cues: %s)", strings.Join(p.Cues, ", "))
	}
	fmt.Fprintf(&b, "\nentities: %s\nterms: %s\n", orNone(p.Entities), orNone(p.Terms))
	if p.Time != nil {
		fmt.Fprintf(&b, "time: %q = %s .. %s\n", p.Time.Expr, p.Time.From.Format(time.RFC3339), p.Time.To.Format(time.RFC3339))
	} else {
		b.WriteString("time: none\n")
	}
	mem := make([]string, len(p.Memories))
	for i, t := range p.Memories {
		mem[i] = string(t)
	}
	fmt.Fprintf(&b, "read: %s", strings.Join(mem, ", "))
	if p.Working {
		fmt.Fprintf(&b, " (run %s)", p.RunID)
	}
	return b.String()
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// frameWords frame a question without being its topic ("do you remember", "tell me"); they stay out of Terms.
var frameWords = wordSet(`remember recall remind tell know think happen happened happening please anything
	something everything summarize summarise summary recap overview`)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// maxTimeExprs bounds the time expressions blanked out of one query.
const maxTimeExprs = 4

// maxEntityWords bounds the phrases looked up in KnownEntities.
const maxEntityWords = 4

// findEntities returns the known entities among the query's phrases (longest first) and then the runs of
// capitalised words that are not question words, time words or already found, all lower-cased, in order.
func findEntities(text string, toks []string, known KnownEntities) []string {
	var out []string
	covered := map[string]bool{}
	if known != nil {
		for i := 0; i < len(toks); {
			n := knownAt(toks, i, known)
			if n == 0 {
				i++
				continue
			}
			key := strings.Join(toks[i:i+n], " ")
			if !slices.Contains(out, key) {
				out = append(out, key)
			}
			for _, t := range toks[i : i+n] {
				covered[t] = true
			}
			i += n
		}
	}
	for _, run := range capitalisedRuns(text) {
		all := true
		for _, t := range nameTokens(run) {
			all = all && covered[t]
		}
		if key := strings.Join(nameTokens(run), " "); key != "" && !all && !slices.Contains(out, key) {
			out = append(out, key)
		}
	}
	return out
}

// knownAt is the length of the longest known phrase starting at toks[i] (a lone stop word never counts).
func knownAt(toks []string, i int, known KnownEntities) int {
	for n := min(maxEntityWords, len(toks)-i); n >= 1; n-- {
		if n == 1 && stopWords[toks[i]] {
			return 0
		}
		if known.HasEntity(strings.Join(toks[i:i+n], " ")) {
			return n
		}
	}
	return 0
}

var wordRe = regexp.MustCompile(`[\p{L}\p{N}][\p{L}\p{N}'’-]*|[^\p{L}\p{N}\s]+|\s+`)

// capitalisedRuns finds runs of capitalised words separated by single spaces ("New York"); possessives are cut
// ("Alice's" is "Alice"); "I", question and frame words, and month and weekday names are not names.
func capitalisedRuns(text string) []string {
	var runs []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			runs = append(runs, strings.Join(cur, " "))
			cur = nil
		}
	}
	for _, w := range wordRe.FindAllString(text, -1) {
		if w == " " {
			continue
		}
		r, _ := utf8.DecodeRuneInString(w)
		if !unicode.IsUpper(r) {
			flush()
			continue
		}
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
		low := strings.ToLower(w)
		if stopWords[low] || frameWords[low] || questionFrames[low] || months[low] != 0 || isWeekday(low) {
			flush()
			continue
		}
		cur = append(cur, w)
	}
	flush()
	return runs
}

func isWeekday(w string) bool {
	_, ok := weekdays[w]
	return ok
}

// questionFrames are words that start questions and requests without being names ("Did", "Tell", "Remind").
var questionFrames = wordSet(`did does do is are was were has have had can could would should will shall may
	might tell show give find list remind summarize summarise recap describe explain please hey ok okay yes no`)

// intentCues lists, in priority order, each intent's cue phrases (matched on the query's lower-cased word
// tokens, so "what's" is "what s"). The first intent with a cue wins: a measurement word outranks a summary
// word, which outranks a preference, an event, then a fact question. A query with a time expression and no cue
// recalls an event.
var intentCues = []struct {
	intent Intent
	cues   [][]string
}{
	{IntentMeasure, phrases(`sleep|slept|sleeping|nap|heart rate|heart|pulse|bpm|hrv|steps|step count|weight|weigh|
		weighed|weighs|kg|kilos|pounds|lbs|calories|blood pressure|glucose|blood sugar|temperature|spo2|oxygen|
		resting|stress level`)},
	{IntentSummary, phrases(`summarize|summarise|summary|recap|overview|sum up|catch me up|highlights|
		how was my|how has my|what have i been|what s been going on|what has been going on`)},
	{IntentPreference, phrases(`prefer|prefers|preference|preferences|favorite|favourite|favorites|favourites|
		i like|do i like|does she like|does he like|they like|we like|i love|love|loves|hate|hates|dislike|
		dislikes|enjoy|enjoys|rather|fan of|taste in`)},
	{IntentRecallEvent, phrases(`did i|did we|did you|have i ever|when did|what happened|last time|the time|
		remember when|went|met|visited|saw|ate|bought|talked|told|called|happened|trip|meeting|party|
		travelled|traveled|flew|drove|attended`)},
	{IntentFactLookup, phrases(`what is|what s|what are|who is|who s|who are|where is|where do|where does|
		which|when is|how old|name|birthday|address|live|lives|work|works|job|email|phone|number|age|allergic|
		married|my`)},
}

func phrases(s string) [][]string {
	var out [][]string
	for _, p := range strings.Split(s, "|") {
		if toks := nameTokens(p); len(toks) > 0 {
			out = append(out, toks)
		}
	}
	return out
}

// classify finds the query's intent and the cues that decided it.
func classify(toks []string, hasTime bool) (Intent, []string) {
	for _, ic := range intentCues {
		var cues []string
		for _, c := range ic.cues {
			if containsSeq(toks, c) {
				cues = append(cues, strings.Join(c, " "))
			}
		}
		if len(cues) > 0 {
			return ic.intent, cues
		}
	}
	if hasTime {
		return IntentRecallEvent, []string{"time expression"}
	}
	return IntentOther, nil
}

// containsSeq reports whether seq occurs in toks as consecutive tokens.
func containsSeq(toks, seq []string) bool {
	for i := 0; i+len(seq) <= len(toks); i++ {
		if slices.Equal(toks[i:i+len(seq)], seq) {
			return true
		}
	}
	return false
}
