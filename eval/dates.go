package eval

import (
	"fmt"
	"strings"
	"time"
)

// Date layouts of the datasets. Neither carries a time zone; times are taken as UTC.
const (
	// LoCoMoTimeLayout is the form of session_<n>_date_time: "1:56 pm on 8 May, 2023".
	LoCoMoTimeLayout = "3:04 pm on 2 January, 2006"
	// LongMemEvalTimeLayout is the form of haystack_dates and question_date: "2023/05/20 (Sat) 00:31".
	LongMemEvalTimeLayout = "2006/01/02 (Mon) 15:04"
)

// ParseLoCoMoTime parses a LoCoMo session date ("1:56 pm on 8 May, 2023") as UTC. It is strict: the value
// must read back identically through the layout, so "01:56 pm", "08 May" or "May 8" are errors rather than
// guesses. Surrounding white space is ignored.
func ParseLoCoMoTime(s string) (time.Time, error) { return parseExact(LoCoMoTimeLayout, s) }

// ParseLongMemEvalTime parses a LongMemEval date ("2023/05/20 (Sat) 00:31") as UTC. It is strict: the value
// must read back identically, which also checks that the weekday matches the date.
func ParseLongMemEvalTime(s string) (time.Time, error) { return parseExact(LongMemEvalTimeLayout, s) }

func parseExact(layout, s string) (time.Time, error) {
	v := strings.TrimSpace(s)
	t, err := time.ParseInLocation(layout, v, time.UTC)
	if err != nil {
		return time.Time{}, fmt.Errorf("date %q: want the form %q", s, layout)
	}
	if back := t.Format(layout); back != v {
		return time.Time{}, fmt.Errorf("date %q: not exactly in the form %q (reads back as %q)", s, layout, back)
	}
	return t, nil
}
