package consolidation

import (
	"strings"
	"unicode"
)

// A pattern's phrase is written as a person would state a habit: "books early morning flight (7am)" after a
// present-tense or imperative verb ("please book me…", "I book…"), "booked morning flight" when it leads with
// a past tense, and "mentions …" when no verb leads. The statement puts "often" in front ("user often books
// early morning flight (7am)"). Numbers and times go in parentheses at the end: they qualify the habit.

// verbCues are words after which the next word is read as a verb in its base form.
var verbCues = set("please", "to", "i", "we", "usually", "always", "often", "will", "ll", "can", "could", "would",
	"should", "must", "let's", "lets", "i'll", "we'll", "don't", "never")

// irregularPast are common past tenses without "-ed": they lead a phrase as they are.
var irregularPast = set("went", "had", "made", "took", "got", "ate", "drank", "ran", "bought", "saw", "met", "flew",
	"drove", "wrote", "did", "gave", "left", "came", "sent", "paid", "sat", "slept", "spent", "told", "found",
	"kept", "began", "brought", "caught", "felt", "heard", "lost", "won", "woke", "wore", "rode", "swam", "sang")

func allDigits(w string) bool {
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return w != ""
}

func hasDigit(w string) bool { return strings.IndexFunc(w, unicode.IsDigit) >= 0 }

// inflections are the endings that make another form of the same verb or noun: "book" and "booked" (the
// user's request and the assistant's confirmation) are one term of a habit, not two.
var inflections = []string{"ed", "d", "ing", "s", "es"}

// mergeInflections drops a core term whose surface is another core term's surface plus an inflection
// (doubled final consonant included: "stop" → "stopped"), keeping the base form and the reading order.
func mergeInflections(core []string, surface map[string]string) []string {
	out := make([]string, 0, len(core))
	for _, t := range core {
		if !inflectedFromAny(surface[t], core, surface) {
			out = append(out, t)
		}
	}
	return out
}

func inflectedFromAny(w string, core []string, surface map[string]string) bool {
	for _, o := range core {
		base := surface[o]
		if base == w || len(base) < 3 || !strings.HasPrefix(w, base) {
			continue
		}
		rest := w[len(base):]
		if len(rest) > 1 && rest[0] == base[len(base)-1] { // stop → stopped
			rest = rest[1:]
		}
		for _, e := range inflections {
			if rest == e {
				return true
			}
		}
	}
	return false
}

// habitPhrase writes a pattern's core terms (surface forms, reading order) as a verb phrase; texts are the
// episodes' texts, read for how the leading word is used.
func habitPhrase(terms []string, texts []string) string {
	var rest, nums []string
	for _, t := range terms {
		if hasDigit(t) {
			nums = append(nums, t)
		} else {
			rest = append(rest, t)
		}
	}
	var phrase string
	switch {
	case len(rest) == 0:
		phrase = "mentions"
	case len(rest[0]) > 4 && strings.HasSuffix(rest[0], "ed") || irregularPast[rest[0]]:
		phrase = strings.Join(rest, " ")
	case usedAsVerb(rest[0], texts):
		phrase = strings.Join(append([]string{thirdPerson(rest[0])}, rest[1:]...), " ")
	default:
		phrase = "mentions " + strings.Join(rest, " ")
	}
	if len(nums) > 0 {
		phrase += " (" + strings.Join(nums, ", ") + ")"
	}
	return phrase
}

// usedAsVerb: in some text, w follows a word after which English puts a verb's base form.
func usedAsVerb(w string, texts []string) bool {
	for _, t := range texts {
		ws := words(t)
		for i := 1; i < len(ws); i++ {
			if ws[i] == w && verbCues[ws[i-1]] {
				return true
			}
		}
	}
	return false
}

func thirdPerson(v string) string {
	switch {
	case strings.HasSuffix(v, "s") || strings.HasSuffix(v, "sh") || strings.HasSuffix(v, "ch") ||
		strings.HasSuffix(v, "x") || strings.HasSuffix(v, "z") || strings.HasSuffix(v, "o"):
		return v + "es"
	case len(v) > 1 && strings.HasSuffix(v, "y") && !strings.ContainsRune("aeiou", rune(v[len(v)-2])):
		return v[:len(v)-1] + "ies"
	}
	return v + "s"
}

func membersText(eps []Episode, members []int) []string {
	out := make([]string, len(members))
	for i, m := range members {
		out[i] = episodeText(eps[m])
	}
	return out
}
