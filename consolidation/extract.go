package consolidation

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// Polarity says whether a candidate asserts or denies its fact.
type Polarity string

// Polarities. A negative candidate ("I no longer live in Berlin", "I don't work at Acme")
// retracts a matching current fact and is never stored itself.
const (
	Positive Polarity = "positive"
	Negative Polarity = "negative"
)

// Candidate is a fact extracted from a message or a "remember" call, before the decision
// against the user's existing facts.
type Candidate struct {
	Subject   string   `json:"subject"`
	Predicate string   `json:"predicate"`
	Object    string   `json:"object"`
	Statement string   `json:"statement"`
	Polarity  Polarity `json:"polarity"`
	// Explicit marks an explicit "remember" request or confirmation: it bypasses the
	// transient, small-talk and hedge gates and carries more confidence.
	Explicit bool `json:"explicit,omitempty"`
	// Source is the message (or call) id, kept as the fact's provenance.
	Source string `json:"source,omitempty"`
	// Time is when it was stated: the fact's valid_from.
	Time time.Time `json:"time"`
}

// Rejection is a sentence the write gate kept out of long-term memory, and why.
type Rejection struct {
	Sentence string `json:"sentence"`
	Reason   string `json:"reason"`
	Source   string `json:"source,omitempty"`
}

// Reasons for a rejection.
const (
	RejectQuestion  = "question"   // a question or request, not a statement
	RejectSmallTalk = "small_talk" // greetings, thanks, acknowledgements
	RejectTransient = "transient"  // a passing state: "I'm tired right now", "today I'm busy"
	RejectHedged    = "hedged"     // a guess, plan or wish: "maybe", "I might", "I'd like to"
	RejectTooLong   = "too_long"   // an explicit note longer than 500 characters
)

// Extract runs the write gate and the English rules over a user message. Sentences that
// pass the gate but match no rule yield nothing: most conversation states no durable fact.
// Assistant and tool messages yield nothing: they are not the user's assertions.
func Extract(m Message) ([]Candidate, []Rejection) {
	if m.Role != RoleUser {
		return nil, nil
	}
	return extractText(m.Content, m.ID, m.Time, false)
}

// Remember handles an explicit "remember this" call: the gate only rejects questions and passing states
// (which the caller keeps as episodes), and a sentence that matches no rule is kept as a note.
func Remember(text, source string, at time.Time) ([]Candidate, []Rejection, error) {
	switch {
	case strings.TrimSpace(text) == "":
		return nil, nil, fmt.Errorf("%w: remember: text is empty", ErrInvalidInput)
	case at.IsZero():
		return nil, nil, fmt.Errorf("%w: remember: time is missing", ErrInvalidInput)
	}
	c, r := extractText(text, source, at, true)
	return c, r, nil
}

func extractText(text, source string, at time.Time, explicit bool) ([]Candidate, []Rejection) {
	var cands []Candidate
	var rejs []Rejection
	for _, s := range clauses(text) {
		facts, reason := extractSentence(s, explicit)
		if reason != "" {
			rejs = append(rejs, Rejection{Sentence: s, Reason: reason, Source: source})
			continue
		}
		for _, f := range facts {
			cands = append(cands, f.candidate(source, at))
		}
	}
	return cands, rejs
}

// extractSentence gates one sentence and applies the rules. An explicit sentence (or one
// that starts with "remember that") that matches no rule becomes a note.
func extractSentence(raw string, explicit bool) ([]rawFact, string) {
	s := normalize(raw)
	if s == "" {
		return nil, ""
	}
	if isQuestion(raw, s) {
		return nil, RejectQuestion
	}
	if m := rememberRe.FindStringSubmatch(s); m != nil {
		explicit, s = true, normalize(m[1])
	}
	// An explicit request lifts the small-talk and hedge gates (the user chose to keep it), but not the
	// transient one: "remember I'm hungry right now" is no long-term knowledge however it is asked; the
	// caller keeps it as an episode.
	if reason := gate(s); reason != "" && (!explicit || reason == RejectTransient) {
		return nil, reason
	}
	facts := applyRules(stripLeadingTime(s))
	for i := range facts {
		facts[i].explicit = explicit
	}
	if len(facts) == 0 && explicit {
		note := strings.Trim(s, " \"'`“”.,;:!")
		if utf8.RuneCountInString(note) > maxNoteRunes {
			return nil, RejectTooLong
		}
		facts = []rawFact{{pred: PredNote, obj: note, explicit: true}}
	}
	return facts, ""
}

// maxNoteRunes bounds an explicit note: one sentence, not a document.
const maxNoteRunes = 500

// clauseRe splits a sentence where a new first-person clause starts ("I'm tired today but
// I work at Acme"), so a transient clause does not take a durable one down with it. Group 1
// is the pronoun the next clause starts with.
var clauseRe = regexp.MustCompile(`(?i),? (?:but|and|although|though|whereas) ((?:i|i'm|i've|my) )`)

// clauses returns the sentences of text, each cut at first-person clause boundaries. The
// clauses of a "remember that …" sentence all stay explicit.
func clauses(text string) []string {
	var out []string
	for _, s := range sentences(text) {
		prefix := ""
		if rememberRe.MatchString(normalize(s)) {
			prefix = "remember that "
		}
		for loc := clauseRe.FindStringSubmatchIndex(s); loc != nil; loc = clauseRe.FindStringSubmatchIndex(s) {
			out = append(out, strings.TrimSpace(s[:loc[0]]))
			s = prefix + s[loc[2]:]
		}
		out = append(out, strings.TrimSpace(s))
	}
	return out
}

var (
	fillerRe = newPrefixes(`(?i)^(?:well|so|oh|also|and|actually|btw|by the way|fyi|just so you know|`+
		`for the record|ok|okay|yeah|yes|hey|anyway|anyways|honestly|basically|hmm|um|uh)\b[,:]?\s*`,
		"well", "so", "oh", "also", "and", "actually", "btw", "by the way", "fyi", "just so you know", "for the record",
		"ok", "yeah", "yes", "hey", "anyway", "honestly", "basically", "hmm", "um", "uh")
	rememberRe = regexp.MustCompile(`(?i)^(?:please\s+)?(?:remember|note|keep in mind|don'?t forget|do not forget|` +
		`never forget|for future reference|make a note)(?:\s+that)?[,:]?\s+(.+)$`)
	leadTimeRe = regexp.MustCompile(`(?i)^(?:today|yesterday|recently|lately|last (?:week|month|year)|now|these days|` +
		`nowadays|since (?:last )?\w+)[,]?\s+`)
)

// normalize trims, unifies apostrophes, drops final punctuation and leading fillers.
func normalize(s string) string {
	s = strings.ReplaceAll(s, "’", "'")
	s = collapseSpace(strings.TrimSpace(s))
	s = strings.TrimRight(s, ".!;:… ")
	for {
		t := fillerRe.ReplaceAllString(s, "")
		if t == s {
			return s
		}
		s = t
	}
}

func stripLeadingTime(s string) string {
	for {
		t := leadTimeRe.ReplaceAllString(s, "")
		if t == s {
			return s
		}
		s = t
	}
}
