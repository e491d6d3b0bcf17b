package consolidation

import (
	"regexp"
	"strings"
)

// The write gate keeps out what fails the reference's three triggers (factuality,
// stability, cross-session reuse): questions and requests, small talk, passing states
// and guesses. Rules are English and deliberately conservative: a durable fact lost to
// the gate can be restated; junk let in pollutes every later retrieval.

var (
	whRe  = regexp.MustCompile(`(?i)^(?:what|who|whom|whose|where|when|why|how|which)(?:'s|'re| (?:is|are|was|were|do|does|did|can|could|would|should|will|have|has|about|much|many|long|often)\b)`)
	auxRe = regexp.MustCompile(`(?i)^(?:can|could|would|will|shall|should|do|does|did|is|are|am|was|were|have|has|may|might|must)(?:n't)? ` +
		`(?:you|i|we|it|they|he|she|there|this|that|my|your|the|a|an|anyone|someone)\b`)
	smallTalkWords = set("hi", "hello", "hey", "thanks", "thank", "you", "ok", "okay", "cool", "great", "nice",
		"awesome", "lol", "haha", "yes", "no", "yeah", "yep", "nope", "sure", "bye", "goodbye", "good", "morning",
		"night", "evening", "afternoon", "see", "ya", "later", "cheers", "welcome", "np", "please", "sounds",
		"perfect", "alright", "right", "got", "it", "wow", "hmm", "oh", "ah", "fine", "much", "so", "very", "a",
		"lot", "bunch", "again", "there", "all", "k", "kk", "ty", "thx", "excellent", "wonderful", "understood",
		"makes", "sense", "indeed", "exactly", "agreed", "done", "that's", "is", "it's", "cool", "and")
	transientTimeRe = newKeywords(`(?i)\b(?:right now|at the moment|atm|for now|for the moment|today|`+
		`tonight|this (?:morning|afternoon|evening|week|weekend))\b`,
		"right now", "at the moment", "atm", "for now", "for the moment", "today", "tonight", "this morning",
		"this afternoon", "this evening", "this week")
	stateVerbRe = regexp.MustCompile(`(?i)\b(?:i'm|i am|i feel|i'm feeling|i am feeling|i have|i've got|my \w+ (?:is|are))\b`)
	stateRe     = regexp.MustCompile(`(?i)^i(?:'m| am| feel)(?: so| really| very| a bit| kind of| kinda| feeling| getting)* ` +
		`(?:tired|hungry|thirsty|sleepy|bored|busy|sick|ill|cold|hot|stressed|exhausted|sad|happy|angry|annoyed|late|` +
		`excited|nervous|anxious|fine|good|ok|okay|great|upset|worried|confused|lost|frustrated|sore|drunk|full|awake|` +
		`ready|back|here|away|out|home|driving|in a meeting|on my way|running late|done|free|online|offline)\b`)
	ailmentRe = regexp.MustCompile(`(?i)^(?:i (?:have|'ve got|got) (?:a |an )?(?:headache|cold|fever|migraine|hangover|` +
		`meeting|call|cough|sore throat)|my \w+ (?:is|are) (?:killing me|hurting|sore|aching|dead|low|full|cold|warm))\b`)
	hedgeRe = newKeywords(`(?i)\b(?:maybe|perhaps|probably|might|not sure|i think|i guess|i suppose|`+
		`considering|thinking (?:about|of)|planning to|plan to|want to|wanna|would like to|i'd like to|i'd love to|`+
		`hope to|hoping to|if)\b`,
		"maybe", "perhaps", "probably", "might", "not sure", "i think", "i guess", "i suppose", "considering",
		"thinking about", "thinking of", "planning to", "plan to", "want to", "wanna", "would like to", "i'd like to",
		"i'd love to",
		"hope to", "hoping to", "if")
)

func set(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// isQuestion: a question mark, a wh-word followed by an auxiliary ("how are", "what's"),
// or an auxiliary followed by a subject ("can you", "do I"). "When I lived in Rome…"
// is not a question.
func isQuestion(raw, s string) bool {
	return strings.HasSuffix(strings.TrimSpace(raw), "?") || whRe.MatchString(s) || auxRe.MatchString(s)
}

// gate returns the reason to reject a normalized statement, or "".
func gate(s string) string {
	switch {
	case isSmallTalk(s):
		return RejectSmallTalk
	case stateRe.MatchString(s) || ailmentRe.MatchString(s):
		return RejectTransient
	case transientTimeRe.MatchString(s) && stateVerbRe.MatchString(s):
		return RejectTransient
	case hedgeRe.MatchString(s):
		return RejectHedged
	}
	return ""
}

func isSmallTalk(s string) bool {
	ws := words(s)
	for _, w := range ws {
		if !smallTalkWords[w] {
			return false
		}
	}
	return true
}
