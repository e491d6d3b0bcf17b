package retrieval

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zone cases must not depend on the machine's zoneinfo
)

// TestParseTimeRangeData runs testdata/plan/time_*.txt: each case is a query, the now and zone it is asked in,
// and the expected range (or none).
func TestParseTimeRangeData(t *testing.T) {
	files, err := filepath.Glob("testdata/plan/time_*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no time test data: %v", err)
	}
	cases := 0
	for _, file := range files {
		cases += runTimeFile(t, file)
	}
	t.Logf("%d cases in %d files", cases, len(files))
}

func runTimeFile(t *testing.T, file string) int {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		loc   = time.UTC
		now   time.Time
		cases int
	)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		at := file + ":" + strconv.Itoa(n)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "tz "):
			if loc, err = time.LoadLocation(strings.TrimSpace(line[3:])); err != nil {
				t.Fatalf("%s: %v", at, err)
			}
		case strings.HasPrefix(line, "now "):
			now = parseNow(t, at, line[4:], loc)
		default:
			cases++
			checkTimeCase(t, at, line, now, loc)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// parseNow reads "<RFC 3339> <weekday>" and checks the weekday, so a slip in the test data shows.
func parseNow(t *testing.T, at, s string, loc *time.Location) time.Time {
	f := strings.Fields(s)
	if len(f) != 2 {
		t.Fatalf("%s: want now <RFC 3339> <weekday>", at)
	}
	now, err := time.Parse(time.RFC3339, f[0])
	if err != nil {
		t.Fatalf("%s: %v", at, err)
	}
	if wd := now.In(loc).Weekday().String(); wd != f[1] {
		t.Fatalf("%s: %s is a %s in %s, not a %s", at, f[0], wd, loc, f[1])
	}
	return now
}

func checkTimeCase(t *testing.T, at, line string, now time.Time, loc *time.Location) {
	t.Helper()
	query, want, ok := strings.Cut(line, " => ")
	if !ok || now.IsZero() {
		t.Fatalf("%s: want '<query> => <from> <to> | <expr>' after a now line", at)
	}
	got, found := ParseTimeRange(query, now, loc)
	if want == "none" {
		if found {
			t.Errorf("%s: %q: want no time range, got %s", at, query, fmtRange(got, loc))
		}
		return
	}
	span, expr, _ := strings.Cut(want, " | ")
	ends := strings.Fields(span)
	if len(ends) != 2 {
		t.Fatalf("%s: want two ends, got %q", at, span)
	}
	wr := TimeRange{From: parseEnd(t, at, ends[0], loc), To: parseEnd(t, at, ends[1], loc), Expr: expr}
	if !found {
		t.Errorf("%s: %q: no time range, want %s", at, query, fmtRange(wr, loc))
		return
	}
	if !got.From.Equal(wr.From) || !got.To.Equal(wr.To) || got.Expr != wr.Expr {
		t.Errorf("%s: %q at %s:\n got %s\nwant %s", at, query, now.In(loc).Format(time.RFC3339), fmtRange(got, loc), fmtRange(wr, loc))
	}
	if got.From.Location() != loc {
		t.Errorf("%s: range in %s, want %s", at, got.From.Location(), loc)
	}
}

func parseEnd(t *testing.T, at, s string, loc *time.Location) time.Time {
	for _, layout := range []string{"2006-01-02", "2006-01-02T15:04"} {
		if v, err := time.ParseInLocation(layout, s, loc); err == nil {
			return v
		}
	}
	t.Fatalf("%s: bad time %q", at, s)
	return time.Time{}
}

func fmtRange(r TimeRange, loc *time.Location) string {
	return r.From.In(loc).Format("2006-01-02T15:04Z07:00") + " .. " + r.To.In(loc).Format("2006-01-02T15:04Z07:00") + " | " + r.Expr
}

func TestParseTimeRangeNilLocationUsesNows(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 11, 1, 0, 0, 0, tokyo) // still 10 March in UTC
	r, ok := ParseTimeRange("today", now, nil)
	if !ok || !r.From.Equal(time.Date(2026, 3, 11, 0, 0, 0, 0, tokyo)) || r.From.Location() != tokyo {
		t.Fatalf("got %+v %v", r, ok)
	}
	if !r.Contains(now) || r.Contains(r.To) || !r.Contains(r.From) {
		t.Fatal("Contains is not [From, To)")
	}
}
