package retrieval

import (
	"cmp"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// TimeRange is the period a query's time expression names: [From, To), in the location it was parsed in.
// Expr is the expression as written in the query.
type TimeRange struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	Expr string    `json:"expr"`
}

// Contains reports whether t falls in [From, To).
func (r TimeRange) Contains(t time.Time) bool { return !t.Before(r.From) && t.Before(r.To) }

// ParseTimeRange finds the first time expression in query and resolves it against now (in loc; nil means
// now's location). It reads no clock. The grammar (timeRules below) is English and calendar-based; weeks run
// Monday–Sunday; seasons are the northern hemisphere's meteorological ones (spring March–May, summer June–August,
// autumn/fall September–November, winter December–February).
//
//   - today, tonight, this morning, yesterday, the day before yesterday, on 2026-03-05, March 5(th)[, 2026],
//     5 March [2026]: that day
//   - this/last week|month|year: the current or the previous calendar period ("last week" on any day of a week is
//     the Monday–Sunday before it)
//   - N days|weeks|months|years ago ("two", "2", "a"): the calendar day, week, month or year N back
//   - last Friday: the latest Friday before today; on/bare Friday: the latest Friday up to today; this Friday:
//     the Friday of the current week
//   - in March: the latest March that has begun; in March 2024; last March: the latest March that has ended;
//     in 2024
//   - last summer: the latest summer that has ended; this summer: the current year's; in (the) summer: the latest
//     that has begun; summer 2024
//   - this/last weekend; the weekend: the current one on a Saturday or Sunday, else the last
//   - last night: yesterday noon to today noon (an evening and the night after it)
//   - over|in|during the last|past N days|weeks|months|years ("the last 10 days", "last 10 days"): from the
//     start of the day N units back to the end of today
//   - since <any of the above, or a bare weekday or month>: from that start to the end of today
//
// Periods that run up to now end at the end of today (day granularity, like "today"). When several expressions
// appear, the first one in the query wins; at one position the longest match wins.
func ParseTimeRange(query string, now time.Time, loc *time.Location) (TimeRange, bool) {
	r, _, ok := findTimeRange(query, now, loc)
	return r, ok
}

// findTimeRange is ParseTimeRange that also returns the expression's byte offset in query.
func findTimeRange(query string, now time.Time, loc *time.Location) (TimeRange, int, bool) {
	if loc == nil {
		loc = now.Location()
	}
	c := newCal(now.In(loc))
	low := asciiLower(query)
	for i := 0; i < len(low); i++ {
		if !wordStart(low, i) {
			continue
		}
		if from, to, n, ok := c.matchAt(low, i, false); ok {
			return TimeRange{From: from, To: to, Expr: query[i : i+n]}, i, true
		}
	}
	return TimeRange{}, 0, false
}

// cal is now seen as a calendar: today's midnight and its parts, in the query's location.
type cal struct {
	loc   *time.Location
	y     int
	m     time.Month
	d     int
	today time.Time
}

func newCal(now time.Time) cal {
	y, m, d := now.Date()
	return cal{loc: now.Location(), y: y, m: m, d: d, today: time.Date(y, m, d, 0, 0, 0, 0, now.Location())}
}

// day is the midnight k days after today. Dates are built with time.Date, never by adding hours, so a daylight
// saving change inside a range does not shift its ends.
func (c cal) day(k int) time.Time { return time.Date(c.y, c.m, c.d+k, 0, 0, 0, 0, c.loc) }

// date is a midnight of a (possibly un-normalised) date.
func (c cal) date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, c.loc) }

// monday is how many days today is after this week's Monday (0 on a Monday, 6 on a Sunday).
func (c cal) monday() int { return (int(c.today.Weekday()) + 6) % 7 }

// matchAt tries every rule at byte offset i of the lower-cased query and keeps the longest match. bare allows
// a lone weekday or month name (only after "since": alone, "may" and "march" are too often verbs).
func (c cal) matchAt(low string, i int, bare bool) (from, to time.Time, n int, ok bool) {
	rest := low[i:]
	if m := sinceRe.FindString(rest); m != "" {
		if f, _, k, ok := c.matchAt(low, i+len(m), true); ok {
			return f, c.day(1), len(m) + k, true
		}
	}
	for _, r := range timeRules {
		sub := r.re.FindStringSubmatch(rest)
		if sub == nil || len(sub[0]) <= n {
			continue
		}
		if sp := r.resolve(c, sub, bare); sp.ok {
			from, to, n, ok = sp.from, sp.to, len(sub[0]), true
		}
	}
	return from, to, n, ok
}

var sinceRe = regexp.MustCompile(`\Asince\s+`)

// asciiLower lower-cases ASCII letters only, so byte offsets stay those of the original query.
// asciiLower lower-cases ASCII letters byte by byte, so offsets into the result are offsets into s (strings.Map
// would turn each invalid UTF-8 byte into a 3-byte U+FFFD and shift them: found by FuzzParseTimeRange).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

func wordStart(s string, i int) bool {
	if !isWordByte(s[i]) {
		return false
	}
	return i == 0 || !isWordByte(s[i-1])
}

func isWordByte(b byte) bool { return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b >= 0x80 }

// numberWords are the counts the grammar accepts spelled out.
var numberWords = map[string]int{"a": 1, "an": 1, "one": 1, "a couple of": 2, "two": 2, "three": 3, "four": 4,
	"five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
	"fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
	"thirty": 30}

// parseCount reads a count: digits (at most four, so the arithmetic cannot overflow) or a number word.
func parseCount(s string) (int, bool) {
	s = strings.Join(strings.Fields(s), " ")
	if n, ok := numberWords[s]; ok {
		return n, true
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0 && n <= 9999
}

var months = map[string]time.Month{"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6,
	"july": 7, "august": 8, "september": 9, "october": 10, "november": 11, "december": 12}

var weekdays = map[string]time.Weekday{"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday,
	"wednesday": time.Wednesday, "thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday}

// seasonStart is the first month of each season (winter starts in December and ends in the next year).
var seasonStart = map[string]time.Month{"spring": time.March, "summer": time.June, "autumn": time.September,
	"fall": time.September, "winter": time.December}

// span is a resolved [from, to); ok is false when the rule refuses the match.
type span struct {
	from, to time.Time
	ok       bool
}

// timeRule is one form of time expression: a regexp anchored at a word start of the lower-cased query, and how
// its submatches resolve to [from, to). resolve may refuse a match (an impossible date, a bare month outside
// "since": bare says whether a lone name is allowed).
type timeRule struct {
	re      *regexp.Regexp
	resolve func(c cal, sub []string, bare bool) span
}

func alternation(keys []string) string {
	sorted := slices.Clone(keys)
	// Longer first, so "fourteen" is tried before "four" and "a couple of" before "a".
	slices.SortFunc(sorted, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	for i, k := range sorted {
		sorted[i] = strings.ReplaceAll(regexp.QuoteMeta(k), " ", `\s+`)
	}
	return "(?:" + strings.Join(sorted, "|") + ")"
}

var (
	numRe     = `(\d{1,4}|` + alternation(slices.Collect(maps.Keys(numberWords)))[3:]
	monthRe   = "(" + alternation(slices.Collect(maps.Keys(months)))[3:]
	weekdayRe = "(" + alternation(slices.Collect(maps.Keys(weekdays)))[3:]
	seasonRe  = "(" + alternation(slices.Collect(maps.Keys(seasonStart)))[3:]
	yearRe    = `((?:19|20|21)\d{2})`
)

func rule(pattern string, resolve func(c cal, sub []string, bare bool) span) timeRule {
	return timeRule{re: regexp.MustCompile(`\A` + pattern + `\b`), resolve: resolve}
}

var timeRules = []timeRule{
	rule(`(?:on\s+)?(\d{4})-(\d{1,2})-(\d{1,2})`, func(c cal, s []string, _ bool) span {
		return c.exactDay(atoi(s[1]), atoi(s[2]), atoi(s[3]))
	}),
	rule(`the\s+day\s+before\s+yesterday`, func(c cal, _ []string, _ bool) span {
		return span{c.day(-2), c.day(-1), true}
	}),
	rule(`yesterday`, func(c cal, _ []string, _ bool) span { return span{c.day(-1), c.day(0), true} }),
	rule(`(?:today|tonight|this\s+(?:morning|afternoon|evening))`, func(c cal, _ []string, _ bool) span {
		return span{c.day(0), c.day(1), true}
	}),
	rule(`last\s+night`, func(c cal, _ []string, _ bool) span {
		return span{c.day(-1).Add(12 * time.Hour), time.Date(c.y, c.m, c.d, 12, 0, 0, 0, c.loc), true}
	}),
	rule(`(this|last|previous)\s+(week|month|year)`, func(c cal, s []string, _ bool) span {
		back := 0
		if s[1] != "this" {
			back = 1
		}
		f, t := c.unitBack(s[2], back)
		return span{f, t, true}
	}),
	rule(numRe+`\s+(day|week|month|year)s?\s+ago`, func(c cal, s []string, _ bool) span {
		n, ok := parseCount(s[1])
		f, t := c.unitBack(s[2], n)
		return span{f, t, ok}
	}),
	rule(`(?:(?:over|in|during|for|within)\s+)?(the\s+)?(?:last|past)\s+`+
		`(?:`+numRe+`\s+|couple\s+of\s+)?(day|week|month|year)s?(\s+of)?`,
		func(c cal, s []string, _ bool) span {
			if s[4] != "" { // "the last day of school", "the last week of March": not a span back from now
				return span{}
			}
			n, counted := 1, s[2] != ""
			if counted {
				n, counted = parseCount(s[2])
			} else if strings.Contains(s[0], "couple") {
				n, counted = 2, true
			}
			if s[1] == "" && !counted { // "last week" is the calendar week (the rule above)
				return span{}
			}
			return span{c.rollingFrom(s[3], n), c.day(1), true}
		}),
	rule(`(?:(last|past|this|on)\s+)?`+weekdayRe, func(c cal, s []string, _ bool) span {
		wd := int(weekdays[s[2]])
		back := (int(c.today.Weekday()) - wd + 7) % 7
		switch s[1] {
		case "last", "past":
			if back == 0 {
				back = 7
			}
		case "this":
			back = c.monday() - (wd+6)%7
		}
		return span{c.day(-back), c.day(-back + 1), true}
	}),
	rule(`(this|last|over\s+the|the|on\s+the|at\s+the)\s+weekend`, func(c cal, s []string, _ bool) span {
		sat := c.day(5 - c.monday()) // this week's Saturday
		if s[1] == "last" || (s[1] != "this" && c.monday() < 5) {
			sat = sat.AddDate(0, 0, -7)
		}
		return span{sat, sat.AddDate(0, 0, 2), true}
	}),
	rule(`(?:on\s+)?`+monthRe+`\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+`+yearRe+`)?`, func(c cal, s []string, _ bool) span {
		return c.monthDay(s[3], months[s[1]], atoi(s[2]))
	}),
	rule(`(?:on\s+)?(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?`+monthRe+`(?:,?\s+`+yearRe+`)?`,
		func(c cal, s []string, _ bool) span {
			return c.monthDay(s[3], months[s[2]], atoi(s[1]))
		}),
	rule(`(?:(in|during|of|last|this)\s+)?`+monthRe+`(?:,?\s+`+yearRe+`)?`, func(c cal, s []string, bare bool) span {
		return c.month(s[1], months[s[2]], s[3], bare)
	}),
	rule(`(?:(in|during)\s+)?`+yearRe, func(c cal, s []string, bare bool) span {
		y := atoi(s[2])
		return span{c.date(y, 1, 1), c.date(y+1, 1, 1), s[1] != "" || bare}
	}),
	rule(`(?:(last|this|in|during|in\s+the|during\s+the|over\s+the)\s+)?`+seasonRe+`(?:\s+(?:of\s+)?`+yearRe+`)?`,
		func(c cal, s []string, bare bool) span {
			return c.season(strings.Join(strings.Fields(s[1]), " "), seasonStart[s[2]], s[3], bare)
		}),
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// exactDay is the day y-m-d, refusing dates that do not exist (2026-02-30).
func (c cal) exactDay(y, m, d int) span {
	f := c.date(y, time.Month(m), d)
	if fy, fm, fd := f.Date(); fy != y || int(fm) != m || fd != d {
		return span{}
	}
	return span{f, f.AddDate(0, 0, 1), true}
}

// unitBack is the calendar day, week (Monday–Sunday), month or year n back from the current one.
func (c cal) unitBack(unit string, n int) (time.Time, time.Time) {
	switch unit {
	case "day":
		return c.day(-n), c.day(-n + 1)
	case "week":
		mon := c.day(-c.monday() - 7*n)
		return mon, mon.AddDate(0, 0, 7)
	case "month":
		return c.date(c.y, c.m-time.Month(n), 1), c.date(c.y, c.m-time.Month(n)+1, 1)
	default: // year
		return c.date(c.y-n, 1, 1), c.date(c.y-n+1, 1, 1)
	}
}

// rollingFrom is the start of the day n units before today. Months keep the day of the month, clamped to the
// target month's length (three months before May 31 is February 28 or 29, not March 3).
func (c cal) rollingFrom(unit string, n int) time.Time {
	switch unit {
	case "day":
		return c.day(-n)
	case "week":
		return c.day(-7 * n)
	case "year":
		n *= 12
	}
	first := c.date(c.y, c.m-time.Month(n), 1)
	last := first.AddDate(0, 1, -1).Day()
	return c.date(first.Year(), first.Month(), min(c.d, last))
}

// monthDay is a day of a month: in the given year, else the latest one not after today.
func (c cal) monthDay(year string, m time.Month, d int) span {
	y := c.y
	if year != "" {
		y = atoi(year)
	} else if c.date(y, m, 1).AddDate(0, 0, d-1).After(c.today) {
		y--
	}
	return c.exactDay(y, int(m), d)
}

// month resolves a month name: "in March 2024" that March; "this March" the current year's; "last March" the
// latest that has ended; "in March" (or bare, after "since") the latest that has begun.
func (c cal) month(prefix string, m time.Month, year string, bare bool) span {
	if prefix == "" && year == "" && !bare {
		return span{}
	}
	if m == time.May && year == "" && prefix == "this" {
		return span{} // "this may be": the verb is far more likely
	}
	y := c.y
	switch {
	case year != "":
		y = atoi(year)
	case prefix == "this":
	case prefix == "last":
		if c.date(y, m+1, 1).After(c.today) {
			y--
		}
	default:
		if c.date(y, m, 1).After(c.today) {
			y--
		}
	}
	return span{c.date(y, m, 1), c.date(y, m+1, 1), true}
}

// season resolves a season name like month does; a winter belongs to the year it starts in.
func (c cal) season(prefix string, start time.Month, year string, bare bool) span {
	if prefix == "" && year == "" && !bare {
		return span{}
	}
	y := c.y
	bounds := func(y int) (time.Time, time.Time) { return c.date(y, start, 1), c.date(y, start+3, 1) }
	switch {
	case year != "":
		y = atoi(year)
	case prefix == "this":
		if start == time.December && c.m < time.March {
			y--
		}
	case prefix == "last":
		for _, to := bounds(y); to.After(c.today); _, to = bounds(y) {
			y--
		}
	default:
		for from, _ := bounds(y); from.After(c.today); from, _ = bounds(y) {
			y--
		}
	}
	f, t := bounds(y)
	return span{f, t, true}
}
