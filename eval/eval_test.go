package eval

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// dataFile returns the path of a shared evaluation file. The data lives next to the repository, in
// ../shared/data relative to its root (never copied into it); EVAL_DATA_DIR overrides the directory. When the
// file is absent the test is skipped, except under CI=true, where a missing file is a failure.
func dataFile(t *testing.T, rel string) string {
	t.Helper()
	dir := os.Getenv("EVAL_DATA_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "data") // from <repo>/eval
	}
	p := filepath.Join(dir, rel)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("evaluation data %s missing under CI: %v", p, err)
		}
		t.Skipf("evaluation data %s not present: %v", p, err)
	}
	return p
}

func TestParseLoCoMoTime(t *testing.T) {
	good := []struct {
		in   string
		want time.Time
	}{
		{"1:56 pm on 8 May, 2023", time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)},
		{"10:04 am on 19 December, 2023", time.Date(2023, 12, 19, 10, 4, 0, 0, time.UTC)},
		{"9:27 am on 7 February, 2022", time.Date(2022, 2, 7, 9, 27, 0, 0, time.UTC)},
		{"12:06 am on 11 November, 2022", time.Date(2022, 11, 11, 0, 6, 0, 0, time.UTC)}, // 12 am is midnight
		{"12:30 pm on 1 January, 2024", time.Date(2024, 1, 1, 12, 30, 0, 0, time.UTC)},   // 12 pm is noon
		{"11:59 pm on 31 July, 2023", time.Date(2023, 7, 31, 23, 59, 0, 0, time.UTC)},
		{" 3:00 pm on 2 October, 2023 ", time.Date(2023, 10, 2, 15, 0, 0, 0, time.UTC)},
	}
	for _, c := range good {
		got, err := ParseLoCoMoTime(c.in)
		if err != nil || !got.Equal(c.want) || got.Location() != time.UTC {
			t.Errorf("ParseLoCoMoTime(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{
		"", "1:56 PM on 8 May, 2023", "01:56 pm on 8 May, 2023", "1:56 pm on 08 May, 2023",
		"1:56 pm on 8 Mai, 2023", "1:56 pm on May 8, 2023", "13:56 pm on 8 May, 2023",
		"1:56 pm on 31 April, 2023", "1:56 pm 8 May, 2023", "1:56 pm on 8 May 2023", "2023-05-08T13:56:00Z",
	} {
		if got, err := ParseLoCoMoTime(in); err == nil {
			t.Errorf("ParseLoCoMoTime(%q) = %v, want an error", in, got)
		}
	}
}

func TestParseLongMemEvalTime(t *testing.T) {
	got, err := ParseLongMemEvalTime("2023/05/20 (Sat) 00:31")
	if want := time.Date(2023, 5, 20, 0, 31, 0, 0, time.UTC); err != nil || !got.Equal(want) {
		t.Fatalf("got %v, %v; want %v", got, err, want)
	}
	for _, in := range []string{
		"2023/05/20 (Fri) 00:31", // wrong weekday
		"2023/5/20 (Sat) 00:31", "2023/05/20 00:31", "2023-05-20 (Sat) 00:31", "2023/05/20 (Sat) 0:31",
		"2023/05/20 (Saturday) 00:31", "",
	} {
		if got, err := ParseLongMemEvalTime(in); err == nil {
			t.Errorf("ParseLongMemEvalTime(%q) = %v, want an error", in, got)
		}
	}
}

func TestNormalizeDiaID(t *testing.T) {
	for in, want := range map[string]string{
		"D3:12": "D3:12", "D:11:26": "D11:26", "D30:05": "D30:5", " D1:1 ": "D1:1", "D007:010": "D7:10",
	} {
		if got, ok := NormalizeDiaID(in); !ok || got != want {
			t.Errorf("NormalizeDiaID(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "D", "D3", "3:12", "D3:", "D3:x", "d3:12", "D3:12:1", "S3:12"} {
		if got, ok := NormalizeDiaID(in); ok {
			t.Errorf("NormalizeDiaID(%q) = %q, want none", in, got)
		}
	}
}

func TestNormalizeEvidence(t *testing.T) {
	ids, bad := NormalizeEvidence([]string{"D8:6; D9:17", "D:11:26", "D30:05", "D", "D8:6", "D1:2,D1:3", "D4:1 D4:2"})
	wantIDs := []string{"D8:6", "D9:17", "D11:26", "D30:5", "D1:2", "D1:3", "D4:1", "D4:2"}
	if !slices.Equal(ids, wantIDs) || !slices.Equal(bad, []string{"D"}) {
		t.Fatalf("ids %q bad %q; want %q and [D]", ids, bad, wantIDs)
	}
	if ids, bad := NormalizeEvidence(nil); ids != nil || bad != nil {
		t.Fatalf("nil evidence: %q %q", ids, bad)
	}
}

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestRecallAtK(t *testing.T) {
	ranked := []string{"D1:1", "D2:5", "D1:1", "", "D3:3", "D4:4"}
	cases := []struct {
		gold []string
		k    int
		want float64
	}{
		{[]string{"D2:5"}, 1, 0},
		{[]string{"D2:5"}, 2, 1},
		{[]string{"D1:1", "D3:3"}, 1, 0.5},
		{[]string{"D1:1", "D3:3"}, 2, 0.5}, // the repeated D1:1 and the empty id take no rank
		{[]string{"D1:1", "D3:3"}, 3, 1},   // third distinct is D3:3
		{[]string{"D1:1", "D3:3", "D9:9"}, 20, 2.0 / 3},
		{[]string{"D1:1", "D1:1", "D9:9"}, 5, 0.5}, // gold duplicates count once
		{nil, 5, 0},
		{[]string{"D9:9"}, 100, 0},
	}
	for _, c := range cases {
		if got := RecallAtK(c.gold, ranked, c.k); !approx(got, c.want) {
			t.Errorf("RecallAtK(%q, k=%d) = %v, want %v", c.gold, c.k, got, c.want)
		}
	}
	if got := RecallAtKs([]string{"D1:1", "D3:3"}, ranked, []int{1, 3, 10}); !slices.Equal(got, []float64{0.5, 1, 1}) {
		t.Errorf("RecallAtKs = %v", got)
	}
	if got := RecallAtK([]string{"a"}, nil, 10); got != 0 {
		t.Errorf("empty ranking: %v", got)
	}
}

func TestRecallAnyAll(t *testing.T) {
	// Sessions of ranked turns: s1 s1 s2 s1 s3 → distinct order s1, s2, s3.
	ranked := []string{"s1", "s1", "s2", "s1", "s3"}
	cases := []struct {
		gold     []string
		k        int
		any, all float64
	}{
		{[]string{"s2"}, 1, 0, 0},
		{[]string{"s2"}, 2, 1, 1},
		{[]string{"s1", "s3"}, 1, 1, 0},
		{[]string{"s1", "s3"}, 2, 1, 0},
		{[]string{"s1", "s3"}, 3, 1, 1},
		{[]string{"s3", "s9"}, 10, 1, 0},
		{[]string{"s9"}, 10, 0, 0},
		{nil, 10, 0, 0},
	}
	for _, c := range cases {
		if got := RecallAny(c.gold, ranked, c.k); got != c.any {
			t.Errorf("RecallAny(%q, k=%d) = %v, want %v", c.gold, c.k, got, c.any)
		}
		if got := RecallAll(c.gold, ranked, c.k); got != c.all {
			t.Errorf("RecallAll(%q, k=%d) = %v, want %v", c.gold, c.k, got, c.all)
		}
	}
	ks := []int{1, 2, 3}
	if got := RecallAnyAtKs([]string{"s1", "s3"}, ranked, ks); !slices.Equal(got, []float64{1, 1, 1}) {
		t.Errorf("RecallAnyAtKs = %v", got)
	}
	if got := RecallAllAtKs([]string{"s1", "s3"}, ranked, ks); !slices.Equal(got, []float64{0, 0, 1}) {
		t.Errorf("RecallAllAtKs = %v", got)
	}
}

func TestMeans(t *testing.T) {
	m := NewMeans(2)
	m.Add([]float64{1, 1}, "overall", "category 1")
	m.Add([]float64{0, 0.5}, "overall", "category 2")
	m.Add([]float64{0, 1}, "category 5")
	if n, got := m.Mean("overall"); n != 2 || !slices.Equal(got, []float64{0.5, 0.75}) {
		t.Errorf("overall: %d %v", n, got)
	}
	if n, got := m.Mean("category 5"); n != 1 || !slices.Equal(got, []float64{0, 1}) {
		t.Errorf("category 5: %d %v", n, got)
	}
	if n, got := m.Mean("category 3"); n != 0 || got != nil {
		t.Errorf("empty group: %d %v", n, got)
	}
	if g := m.Groups(); !slices.Equal(g, []string{"overall", "category 1", "category 2", "category 5"}) {
		t.Errorf("groups %q", g)
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]time.Duration{50: 50 * time.Millisecond, 99: 99 * time.Millisecond,
		100: 100 * time.Millisecond, 1: time.Millisecond, 0.1: time.Millisecond} {
		if got := Percentile(ds, p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	if ds[0] != 100*time.Millisecond {
		t.Error("Percentile sorted its argument")
	}
	three := []time.Duration{3, 1, 2}
	if Percentile(three, 50) != 2 || Percentile(three, 99) != 3 || Percentile(nil, 50) != 0 {
		t.Error("small inputs")
	}
}

func TestNormalizeKs(t *testing.T) {
	got, err := NormalizeKs([]int{20, 1, 5, 10, 5})
	if err != nil || !slices.Equal(got, []int{1, 5, 10, 20}) {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range [][]int{nil, {0}, {1, 1001}, {-3}} {
		if _, err := NormalizeKs(bad); err == nil {
			t.Errorf("NormalizeKs(%v): no error", bad)
		}
	}
}

func TestModes(t *testing.T) {
	for _, c := range []struct {
		name      string
		vec, text float64
		note      bool
	}{{"hybrid", 0.7, 0.3, false}, {"bm25", 0, 1, false}, {"vector", 1, 0, false}, {"pipeline", 0.7, 0.3, true}} {
		m, err := ParseMode(c.name)
		if err != nil {
			t.Fatal(err)
		}
		v, tx := m.Weights()
		if v != c.vec || tx != c.text || (m.Note() != "") != c.note {
			t.Errorf("%s: %v %v %q", c.name, v, tx, m.Note())
		}
		if want := map[bool]string{true: "pipeline", false: "hybrid"}[c.name == "pipeline"]; m.SearchMode() != want {
			t.Errorf("%s: search mode %q", c.name, m.SearchMode())
		}
	}
	if _, err := ParseMode("BM25"); err == nil || !strings.Contains(err.Error(), "want hybrid") {
		t.Errorf("ParseMode(BM25): %v", err)
	}
}

func mustUnmarshalFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}
