package consolidation

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Objects are cut at clause boundaries, cleaned of trailing time words and, for list
// predicates, split into items. Over-long objects are dropped: a rule that captured a
// whole clause has misparsed it.
const (
	maxObjectRunes = 80
	maxObjectWords = 8
)

var (
	clauseCuts = []string{", ", "; ", " but ", " because ", " since ", " so ", " which ", " where ", " who ",
		" although ", " though ", " when ", " while ", " - ", " and i ", " and my "}
	trailingRe = regexp.MustCompile(`(?i)(?:\s+(?:now|these days|nowadays|today|yesterday|recently|originally|anymore|` +
		`any more|again|too|as well|though|lol|haha|actually|by the way|btw|a while ago|last (?:week|month|year)|` +
		`this (?:week|month|year)|in \d{4}))+$`)
	listSplitRe = regexp.MustCompile(`(?i),\s*(?:and |or )?|\s+(?:and|or|&)\s+`)
	articleRe   = regexp.MustCompile(`(?i)^(?:a|an|the)\s+`)
)

func objects(raw string, ru rule) []string {
	cuts := clauseCuts
	if !ru.list {
		cuts = append(append([]string(nil), clauseCuts...), ru.cut...)
	} else {
		cuts = clauseCuts[2:] // keep ", " for splitting the list
	}
	obj := cutAt(raw, cuts)
	parts := []string{obj}
	if ru.list {
		parts = listSplitRe.Split(obj, -1)
	}
	var out []string
	for _, p := range parts {
		if c := cleanObject(p, nil); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// cleanObject trims punctuation, quotes and trailing time words, applies cuts, and
// returns "" for an object that is empty or too long to be one.
func cleanObject(s string, cuts []string) string {
	s = cutAt(s, cuts)
	s = strings.Trim(s, " \t\"'`“”.,;:!")
	s = strings.TrimSpace(trailingRe.ReplaceAllString(s, ""))
	s = strings.Trim(s, " \"'`“”.,;:!")
	if s == "" || utf8.RuneCountInString(s) > maxObjectRunes || len(strings.Fields(s)) > maxObjectWords {
		return ""
	}
	return s
}

func cutAt(s string, cuts []string) string {
	low := strings.ToLower(s)
	end := len(s)
	for _, c := range cuts {
		if i := strings.Index(low, c); i >= 0 && i < end {
			end = i
		}
	}
	return s[:end]
}

// objectKey is how objects compare: case, articles, punctuation and spacing ignored.
func objectKey(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = articleRe.ReplaceAllString(s, "")
	return strings.Join(words(s), " ")
}

// statement renders a fact in the third person, one canonical form per predicate so
// restatements compare equal.
func statement(subj, pred, obj string, neg bool) string {
	var s string
	switch {
	case subj != SubjectUser:
		s = subj + " " + strings.ReplaceAll(pred, "_", " ") + " " + obj
	default:
		s = userStatement(pred, obj)
	}
	if neg {
		return "not: " + s
	}
	return s
}

func userStatement(pred, obj string) string {
	var s string
	switch pred {
	case PredName:
		s = "user's name is " + obj
	case PredAge:
		s = "user is " + obj + " years old"
	case PredLivesIn:
		s = "user lives in " + obj
	case PredFrom:
		s = "user is from " + obj
	case PredWorksAt:
		s = "user works at " + obj
	case PredOccupation:
		s = "user works as " + withArticle(obj)
	case PredIsA:
		s = "user is " + obj
	case PredLikes, PredDislikes, PredPrefers, PredSpeaks:
		s = "user " + pred + " " + obj
	case PredHas:
		s = "user has " + withArticle(obj)
	case PredAllergicTo:
		s = "user is allergic to " + obj
	case PredNote:
		s = "user asked to remember: " + obj
	case PredPattern:
		s = "user often " + obj // obj is a habit phrase (habit.go)
	default:
		s = "user's " + strings.ReplaceAll(pred, "_", " ") + " is " + obj
	}
	return s
}

func withArticle(obj string) string {
	if articleRe.MatchString(obj) || obj == "" {
		return obj
	}
	if strings.ContainsRune("aeiouAEIOU", rune(obj[0])) {
		return "an " + obj
	}
	return "a " + obj
}
