package consolidation

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestAggregate(t *testing.T) {
	loc := time.FixedZone("UTC+2", 2*3600)
	samples := []Sample{
		{"hr", t0.Add(3 * time.Hour), 70},
		{"hr", t0.Add(1 * time.Hour), 60},
		{"hr", t0.Add(2 * time.Hour), 90},
		{"hr", t0.Add(4 * time.Hour), 64},
		// 22:30 UTC is already the next day at UTC+2.
		{"hr", t0.Add(13*time.Hour + 30*time.Minute), 50},
		{"steps", t0, 1000},
	}
	aggs, err := Aggregate(samples, loc)
	if err != nil {
		t.Fatal(err)
	}
	want := []DailyAggregate{
		{Signal: "hr", Day: time.Date(2026, 1, 1, 0, 0, 0, 0, loc), Count: 4, Min: 60, Max: 90, Mean: 71, P50: 67},
		{Signal: "hr", Day: time.Date(2026, 1, 2, 0, 0, 0, 0, loc), Count: 1, Min: 50, Max: 50, Mean: 50, P50: 50},
		{Signal: "steps", Day: time.Date(2026, 1, 1, 0, 0, 0, 0, loc), Count: 1, Min: 1000, Max: 1000, Mean: 1000, P50: 1000},
	}
	if len(aggs) != len(want) {
		t.Fatalf("got %+v", aggs)
	}
	for i := range want {
		if !aggs[i].Day.Equal(want[i].Day) || aggs[i].Signal != want[i].Signal || aggs[i].Count != want[i].Count ||
			aggs[i].Min != want[i].Min || aggs[i].Max != want[i].Max || aggs[i].Mean != want[i].Mean || aggs[i].P50 != want[i].P50 {
			t.Errorf("agg %d = %+v, want %+v", i, aggs[i], want[i])
		}
	}
	for _, bad := range []Sample{{"", t0, 1}, {"hr", time.Time{}, 1}, {"hr", t0, math.NaN()}, {"hr", t0, math.Inf(1)}} {
		if _, err := Aggregate([]Sample{bad}, nil); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("Aggregate(%+v) err = %v", bad, err)
		}
	}
}

// daily builds one aggregate per day from values (NaN = no data that day).
func daily(signal string, values ...float64) []DailyAggregate {
	var out []DailyAggregate
	for i, v := range values {
		if math.IsNaN(v) {
			continue
		}
		out = append(out, DailyAggregate{Signal: signal, Day: t0.AddDate(0, 0, i), Count: 1, Min: v, Max: v, Mean: v, P50: v})
	}
	return out
}

func TestDetectAnomalies(t *testing.T) {
	nan := math.NaN()
	sleep := []float64{7.1, 6.9, 7.3, 7.0, 6.8, 7.2, 7.0, 7.1, 4.2, 7.0, 9.9}
	tests := []struct {
		name string
		aggs []DailyAggregate
		want string // "day:direction" list
	}{
		{"drop and spike", daily("sleep_h", sleep...), "8:low 10:high"},
		{"not enough history", daily("sleep_h", 7, 7, 7, 7, 7, 4), ""},
		{"gaps count days, not entries", daily("sleep_h", 7, nan, 7.1, nan, 6.9, nan, 7, nan, 7.2, nan, 7, nan, 7.1, nan, 3), "14:low"},
		// A flat baseline: the spread floor (1% of the median) keeps small changes quiet.
		{"flat baseline", daily("hr", 60, 60, 60, 60, 60, 60, 60, 61, 80), "8:high"},
		{"old history falls out of the window", append(daily("hr", 60, 60, 60, 60, 60, 60, 60),
			DailyAggregate{Signal: "hr", Day: t0.AddDate(0, 0, 40), Mean: 200, Count: 1}), ""},
	}
	for _, tt := range tests {
		an, err := DetectAnomalies(tt.aggs, PerceptualOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if g := dayList(an); g != tt.want {
			t.Errorf("%s: anomalies %q, want %q (%+v)", tt.name, g, tt.want, an)
		}
	}
}

func dayList(an []Anomaly) string {
	var parts []string
	for _, a := range an {
		parts = append(parts, strconv.Itoa(int(a.Day.Sub(t0).Hours()/24))+":"+a.Direction)
	}
	return strings.Join(parts, " ")
}

func TestAnomalyEpisode(t *testing.T) {
	an, _ := DetectAnomalies(daily("sleep_h", 7.1, 6.9, 7.3, 7.0, 6.8, 7.2, 7.0, 7.1, 4.2), PerceptualOptions{})
	if len(an) != 1 {
		t.Fatalf("anomalies %+v", an)
	}
	e := an[0].Episode(PerceptualOptions{})
	want := "sleep h mean was 4.2 on 2026-01-09, below the usual 7.05 (robust z -19.2 over 8 days)."
	if e.Summary != want || !e.Start.Equal(an[0].Day) || e.End.Sub(e.Start) != 24*time.Hour || e.Importance != 1 {
		t.Errorf("episode %+v", e)
	}
	if _, err := DetectAnomalies(nil, PerceptualOptions{Stat: "mode"}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("unknown stat: err = %v", err)
	}
}
