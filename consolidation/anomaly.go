package consolidation

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// PerceptualOptions configure anomaly detection against the user's own baseline.
type PerceptualOptions struct {
	// Window is the trailing baseline, in days before the day judged. Default 28.
	Window int
	// MinHistory: days of baseline needed before anything is judged. Default 7.
	MinHistory int
	// Threshold on the robust z-score |x − median| / (1.4826·MAD). Default 3.5
	// (Iglewicz and Hoaglin's cut-off for the modified z-score).
	Threshold float64
	// Stat is the daily statistic judged: count, min, max, mean or p50. Default mean.
	Stat string
	// MinRelativeSpread floors the spread at this fraction of |median|, so a perfectly
	// flat baseline does not make every small change infinitely anomalous. Default 0.01.
	MinRelativeSpread float64
}

func (o PerceptualOptions) withDefaults() PerceptualOptions {
	defInt(&o.Window, 28)
	defInt(&o.MinHistory, 7)
	defFloat(&o.Threshold, 3.5)
	if o.Stat == "" {
		o.Stat = StatMean
	}
	defFloat(&o.MinRelativeSpread, 0.01)
	return o
}

// Validate checks the options.
func (o PerceptualOptions) Validate() error {
	var c check
	c.nonNeg("perceptual.window", float64(o.Window))
	c.nonNeg("perceptual.min_history", float64(o.MinHistory))
	c.nonNeg("perceptual.threshold", o.Threshold)
	c.unit("perceptual.min_relative_spread", o.MinRelativeSpread)
	d := o.withDefaults()
	c.cond(d.MinHistory <= d.Window, "perceptual.min_history %d exceeds perceptual.window %d", d.MinHistory, d.Window)
	switch d.Stat {
	case StatCount, StatMin, StatMax, StatMean, StatP50:
	default:
		c.cond(false, "perceptual.stat %q (want count, min, max, mean or p50)", d.Stat)
	}
	return c.err
}

// Anomaly is a day whose statistic lies far from the user's own recent baseline.
type Anomaly struct {
	Signal    string    `json:"signal"`
	Day       time.Time `json:"day"`
	Stat      string    `json:"stat"`
	Value     float64   `json:"value"`
	Median    float64   `json:"median"` // of the baseline
	Spread    float64   `json:"spread"` // robust standard deviation used for Z
	Z         float64   `json:"z"`
	Baseline  int       `json:"baseline_days"`
	Direction string    `json:"direction"` // "high" or "low"
}

// DetectAnomalies judges every day that has at least MinHistory days of the same signal in
// the Window days before it. The spread is 1.4826·MAD (the standard deviation for normal
// data, but robust to the outliers it is meant to find); if MAD is 0 it falls back to
// 1.2533·mean absolute deviation, then to MinRelativeSpread·|median|. Results are ordered
// like aggs (by signal, then day).
func DetectAnomalies(aggs []DailyAggregate, opts PerceptualOptions) ([]Anomaly, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	bySignal := map[string][]DailyAggregate{}
	for _, a := range aggs {
		bySignal[a.Signal] = append(bySignal[a.Signal], a)
	}
	var out []Anomaly
	for _, sig := range sortedKeys(bySignal) {
		days := bySignal[sig]
		sort.SliceStable(days, func(i, j int) bool { return days[i].Day.Before(days[j].Day) })
		for i, a := range days {
			if an, ok := judge(a, baseline(days[:i], a.Day, o), o); ok {
				out = append(out, an)
			}
		}
	}
	return out, nil
}

// baseline returns the statistic of the days in [day−Window, day).
func baseline(prior []DailyAggregate, day time.Time, o PerceptualOptions) []float64 {
	from := day.AddDate(0, 0, -o.Window)
	var vs []float64
	for _, p := range prior {
		if !p.Day.Before(from) && p.Day.Before(day) {
			vs = append(vs, p.Stat(o.Stat))
		}
	}
	return vs
}

func judge(a DailyAggregate, base []float64, o PerceptualOptions) (Anomaly, bool) {
	if len(base) < o.MinHistory {
		return Anomaly{}, false
	}
	sort.Float64s(base)
	med := median(base)
	dev := make([]float64, len(base))
	var sum float64
	for i, v := range base {
		dev[i] = math.Abs(v - med)
	}
	sort.Float64s(dev)
	for _, d := range dev {
		sum += d
	}
	spread := 1.4826 * median(dev)
	if spread == 0 {
		spread = 1.2533 * sum / float64(len(dev))
	}
	spread = math.Max(spread, math.Max(o.MinRelativeSpread*math.Abs(med), 1e-9))
	x := a.Stat(o.Stat)
	z := (x - med) / spread
	if math.Abs(z) < o.Threshold {
		return Anomaly{}, false
	}
	dir := "high"
	if z < 0 {
		dir = "low"
	}
	return Anomaly{Signal: a.Signal, Day: a.Day, Stat: o.Stat, Value: x, Median: med, Spread: spread,
		Z: math.Round(z*100) / 100, Baseline: len(base), Direction: dir}, true
}

// Episode describes the anomaly as an episode, so it enters episodic memory like any
// other event: importance grows with |z| from 0.5 at the threshold to 1.
func (a Anomaly) Episode(opts PerceptualOptions) Episode {
	threshold := opts.withDefaults().Threshold
	word := "above"
	if a.Direction == "low" {
		word = "below"
	}
	sum := fmt.Sprintf("%s %s was %.4g on %s, %s the usual %.4g (robust z %.1f over %d days).",
		strings.ReplaceAll(a.Signal, "_", " "), a.Stat, a.Value, a.Day.Format("2006-01-02"), word, a.Median, a.Z, a.Baseline)
	imp := clamp01(0.5 + (math.Abs(a.Z)-threshold)/(4*threshold))
	return Episode{Start: a.Day, End: a.Day.AddDate(0, 0, 1), Summary: sum, Entities: []string{a.Signal},
		Tags: []string{"perceptual", "anomaly", a.Signal, a.Direction}, Importance: math.Round(imp*100) / 100,
		Boundary: "anomaly"}
}
