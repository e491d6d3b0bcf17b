package consolidation

import (
	"regexp"
	"strings"
	"time"
)

// Predicates the rules produce. "my X is Y" produces the predicate x (spaces to
// underscores, e.g. favorite_color).
const (
	PredName       = "name"
	PredAge        = "age"
	PredLivesIn    = "lives_in"
	PredFrom       = "from"
	PredWorksAt    = "works_at"
	PredOccupation = "occupation"
	PredIsA        = "is_a"
	PredLikes      = "likes"
	PredDislikes   = "dislikes"
	PredPrefers    = "prefers"
	PredSpeaks     = "speaks"
	PredAllergicTo = "allergic_to"
	PredHas        = "has"     // possessions, pets, family: "I have a cat named Tom"
	PredNote       = "note"    // an explicit "remember …" that matches no rule
	PredPattern    = "pattern" // a promoted pattern (patterns.go)
)

// SubjectUser is the subject of every first-person fact.
const SubjectUser = "user"

// rawFact is a rule's output before it becomes a Candidate.
type rawFact struct {
	pred, obj string
	neg       bool
	explicit  bool
}

func (f rawFact) candidate(source string, at time.Time) Candidate {
	p := Positive
	if f.neg {
		p = Negative
	}
	return Candidate{Subject: SubjectUser, Predicate: f.pred, Object: f.obj, Statement: statement(SubjectUser, f.pred, f.obj, f.neg),
		Polarity: p, Explicit: f.explicit, Source: source, Time: at}
}

// rule maps a sentence to facts. pred "" means "my X is Y": the predicate is group 1.
type rule struct {
	re   *regexp.Regexp
	pred string
	list bool     // the object may be a list: "tea, coffee and jazz"
	cut  []string // extra clause separators for this predicate
}

var (
	place = []string{" with ", " and ", " as ", " for ", " since ", " near "}
	role  = []string{" at ", " in ", " for ", " with ", " and ", " since "}
)

func r(expr, pred string, list bool, cut []string) rule {
	return rule{re: regexp.MustCompile(`(?i)^` + expr + `$`), pred: pred, list: list, cut: cut}
}

// rules, first match wins; the object is the last group.
var rules = []rule{
	r(`(?:my name is|my name's|call me|you can call me|i'm called|i am called|people call me) (.+)`, PredName, false, place),
	r(`i(?:'m| am) (\d{1,3})(?: years old| yrs old| y/?o)?`, PredAge, false, nil),
	r(`i (?:live|reside) in (.+)`, PredLivesIn, false, place),
	r(`i(?:'m| am) (?:living|based|located) in (.+)`, PredLivesIn, false, place),
	r(`i(?:'ve| have)? ?(?:just |recently |finally )?(?:moved|relocated) (?:back )?to (.+)`, PredLivesIn, false, place),
	r(`i(?:'m| am) (?:originally )?from (.+)`, PredFrom, false, place),
	r(`i (?:was born|grew up) in (.+)`, PredFrom, false, place),
	r(`i (?:work|am working|'m working) as (?:a |an )?(.+)`, PredOccupation, false, role),
	r(`i(?:'m| am) employed as (?:a |an )?(.+)`, PredOccupation, false, role),
	r(`my (?:job|occupation|profession) is (?:a |an )?(.+)`, PredOccupation, false, role),
	r(`i (?:work|am working|'m working) (?:at|for) (.+)`, PredWorksAt, false, place),
	r(`i(?:'m| am) (?:employed|working) (?:at|by|for) (.+)`, PredWorksAt, false, place),
	r(`i(?:'ve| have)? ?(?:just |recently )?(?:joined|started at|started working at|started working for) (.+)`, PredWorksAt, false, place),
	r(`i(?:'m| am) allergic to (.+)`, PredAllergicTo, true, nil),
	r(`i (?:really |also |absolutely |totally |do )?(?:like|love|enjoy|adore) (?:to )?(.+)`, PredLikes, true, nil),
	r(`i (?:really |also |absolutely |totally )?(?:hate|dislike|detest|loathe|can't stand|cannot stand|can not stand) (?:to )?(.+)`, PredDislikes, true, nil),
	r(`i (?:really |also |usually |generally |always |much )?prefer (.+)`, PredPrefers, false, nil),
	r(`i speak (.+)`, PredSpeaks, true, nil),
	r(`i (?:have|own|'ve got|have got) (?:a |an |one )?((?:pet |little |big |old |young |new )?(?:cat|dog|kitten|puppy|horse|rabbit|bird|parrot|fish|hamster|car|bike|motorcycle|house|flat|apartment|boat|son|daughter|brother|sister|husband|wife|partner|boyfriend|girlfriend|child|baby|twin)s?(?: (?:named|called) [\w' -]+)?)`, PredHas, false, nil),
	r(`i(?:'m| am) ((?:a|an) .+)`, PredIsA, false, role),
	r(`i(?:'m| am) (vegetarian|vegan|pescatarian|married|single|divorced|widowed|engaged|retired|left-handed|right-handed)`, PredIsA, false, nil),
	r(`my ((?:[\w'-]+ ){0,3}?[\w'-]+) (?:is|are|was born on|'s) (.+)`, "", false, place),
}

// Negations and retractions rewrite the sentence to its positive form and flip polarity;
// "I don't like X" is a positive dislike instead (a preference, not a retraction).
var (
	dislikeRe = regexp.MustCompile(`(?i)^i (?:don't|do not|dont|never) (?:really )?(?:like|love|enjoy) (.+)$`)
	negRes    = []struct {
		re     *regexp.Regexp
		prefix string
	}{
		{regexp.MustCompile(`(?i)^i (?:no longer|don't|do not|dont) (.+?) any ?more$`), "i "},
		{regexp.MustCompile(`(?i)^i (?:no longer|don't|do not|dont) (.+)$`), "i "},
		{regexp.MustCompile(`(?i)^i(?:'m| am) (?:not|no longer) (.+?)(?: any ?more)?$`), "i am "},
		{regexp.MustCompile(`(?i)^i(?:'m| am)n't (.+?)(?: any ?more)?$`), "i am "},
		{regexp.MustCompile(`(?i)^my (.+?) (?:is not|isn't|is no longer) (.+?)(?: any ?more)?$`), "my "},
	}
)

// applyRules returns the facts of one normalized sentence.
func applyRules(s string) []rawFact {
	for i, n := range negRes {
		if i == 1 { // after "… anymore" (a retraction), before plain negations
			if m := dislikeRe.FindStringSubmatch(s); m != nil {
				return match("i dislike " + m[1])
			}
		}
		m := n.re.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		pos := n.prefix + m[1]
		if len(m) == 3 {
			pos = n.prefix + m[1] + " is " + m[2]
		}
		facts := match(pos)
		for i := range facts {
			facts[i].neg = true
		}
		return facts
	}
	return match(s)
}

func match(s string) []rawFact {
	for _, ru := range rules {
		m := ru.re.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		pred := ru.pred
		if pred == "" {
			pred = attributePredicate(m[1])
		}
		var out []rawFact
		for _, obj := range objects(m[len(m)-1], ru) {
			out = append(out, rawFact{pred: pred, obj: obj})
		}
		return out
	}
	return nil
}

// attributePredicate turns "favourite colour" into favorite_color.
func attributePredicate(x string) string {
	x = strings.ToLower(strings.ReplaceAll(x, "'s", ""))
	x = strings.NewReplacer("favourite", "favorite", "colour", "color").Replace(x)
	return strings.Join(strings.Fields(x), "_")
}
