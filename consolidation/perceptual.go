package consolidation

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Sample is one perceptual measurement (heart rate, steps, sleep hours…).
type Sample struct {
	Signal string    `json:"signal"`
	Time   time.Time `json:"time"`
	Value  float64   `json:"value"`
}

// DailyAggregate summarises one signal over one calendar day.
type DailyAggregate struct {
	Signal string `json:"signal"`
	// Day is midnight at the start of the day, in the aggregation's location.
	Day   time.Time `json:"day"`
	Count int       `json:"count"`
	Min   float64   `json:"min"`
	Max   float64   `json:"max"`
	Mean  float64   `json:"mean"`
	P50   float64   `json:"p50"`
}

// Statistics an anomaly can be judged on.
const (
	StatCount = "count"
	StatMin   = "min"
	StatMax   = "max"
	StatMean  = "mean"
	StatP50   = "p50"
)

// Stat returns the named statistic.
func (a DailyAggregate) Stat(name string) float64 {
	switch name {
	case StatCount:
		return float64(a.Count)
	case StatMin:
		return a.Min
	case StatMax:
		return a.Max
	case StatP50:
		return a.P50
	}
	return a.Mean
}

// Aggregate groups samples by signal and calendar day in loc (nil: UTC) and returns the
// aggregates ordered by signal, then day. A sample with no signal, no time or a
// non-finite value is an error naming its index.
func Aggregate(samples []Sample, loc *time.Location) ([]DailyAggregate, error) {
	if loc == nil {
		loc = time.UTC
	}
	type key struct {
		signal string
		day    time.Time
	}
	groups := map[key][]float64{}
	for i, s := range samples {
		if err := s.validate(); err != nil {
			return nil, fmt.Errorf("sample %d: %w", i, err)
		}
		k := key{s.Signal, startOfDay(s.Time, loc)}
		groups[k] = append(groups[k], s.Value)
	}
	out := make([]DailyAggregate, 0, len(groups))
	for k, vs := range groups {
		out = append(out, aggregate(k.signal, k.day, vs))
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Signal != out[j].Signal {
			return out[i].Signal < out[j].Signal
		}
		return out[i].Day.Before(out[j].Day)
	})
	return out, nil
}

func (s Sample) validate() error {
	switch {
	case strings.TrimSpace(s.Signal) == "":
		return fmt.Errorf("%w: signal is empty", ErrInvalidInput)
	case s.Time.IsZero():
		return fmt.Errorf("%w: time is missing", ErrInvalidInput)
	case math.IsNaN(s.Value) || math.IsInf(s.Value, 0):
		return fmt.Errorf("%w: value %v is not finite", ErrInvalidInput, s.Value)
	}
	return nil
}

func startOfDay(t time.Time, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, loc)
}

// aggregate sorts vs (a copy) so the sum, and so the mean, does not depend on arrival order.
func aggregate(signal string, day time.Time, vs []float64) DailyAggregate {
	v := append([]float64(nil), vs...)
	sort.Float64s(v)
	var sum float64
	for _, x := range v {
		sum += x
	}
	return DailyAggregate{Signal: signal, Day: day, Count: len(v), Min: v[0], Max: v[len(v)-1],
		Mean: sum / float64(len(v)), P50: median(v)}
}

// median of sorted values (mean of the two middle ones for an even count).
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
