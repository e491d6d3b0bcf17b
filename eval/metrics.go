package eval

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"
)

// MaxK bounds a k: the search API returns at most 1000 results.
const MaxK = 1000

// NormalizeKs checks a k list (each 1..MaxK) and returns it sorted ascending without duplicates.
func NormalizeKs(ks []int) ([]int, error) {
	if len(ks) == 0 {
		return nil, fmt.Errorf("no k given")
	}
	out := slices.Clone(ks)
	for _, k := range out {
		if k < 1 || k > MaxK {
			return nil, fmt.Errorf("k %d: must be between 1 and %d", k, MaxK)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// TopDistinct returns the first k distinct non-empty values of ranked, in rank order.
func TopDistinct(ranked []string, k int) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range ranked {
		if len(out) >= k {
			break
		}
		if v == "" || seen[v] {
			continue
		}
		seen[v] = true
		out = append(out, v)
	}
	return out
}

// hits counts the distinct gold values found among the first k distinct ranked values, and the distinct gold.
func hits(gold, ranked []string, k int) (found, total int) {
	top := map[string]bool{}
	for _, v := range TopDistinct(ranked, k) {
		top[v] = true
	}
	seen := map[string]bool{}
	for _, g := range gold {
		if g == "" || seen[g] {
			continue
		}
		seen[g] = true
		total++
		if top[g] {
			found++
		}
	}
	return found, total
}

// RecallAtK is |gold ∩ top-k| / |gold| over distinct values, where top-k is the first k distinct ranked
// values (LoCoMo's evidence recall over turn ids). It is 0 when gold is empty; callers skip such questions.
func RecallAtK(gold, ranked []string, k int) float64 {
	found, total := hits(gold, ranked, k)
	if total == 0 {
		return 0
	}
	return float64(found) / float64(total)
}

// RecallAny is 1 when any gold value is among the first k distinct ranked values, else 0 (LongMemEval's
// recall_any@k over sessions: ranked is the session of each ranked turn).
func RecallAny(gold, ranked []string, k int) float64 {
	if found, _ := hits(gold, ranked, k); found > 0 {
		return 1
	}
	return 0
}

// RecallAll is 1 when every gold value is among the first k distinct ranked values, else 0 (LongMemEval's
// recall_all@k). It is 0 when gold is empty.
func RecallAll(gold, ranked []string, k int) float64 {
	if found, total := hits(gold, ranked, k); total > 0 && found == total {
		return 1
	}
	return 0
}

// RecallAtKs is RecallAtK at each k.
func RecallAtKs(gold, ranked []string, ks []int) []float64 { return atKs(RecallAtK, gold, ranked, ks) }

// RecallAnyAtKs is RecallAny at each k.
func RecallAnyAtKs(gold, ranked []string, ks []int) []float64 {
	return atKs(RecallAny, gold, ranked, ks)
}

// RecallAllAtKs is RecallAll at each k.
func RecallAllAtKs(gold, ranked []string, ks []int) []float64 {
	return atKs(RecallAll, gold, ranked, ks)
}

func atKs(f func([]string, []string, int) float64, gold, ranked []string, ks []int) []float64 {
	out := make([]float64, len(ks))
	for i, k := range ks {
		out[i] = f(gold, ranked, k)
	}
	return out
}

// Means averages per-question values, one slice per k, by group ("overall", "category 2", …).
type Means struct {
	width  int
	order  []string
	sums   map[string][]float64
	counts map[string]int
}

// NewMeans returns an empty table for values of the given width (the number of ks).
func NewMeans(width int) *Means {
	return &Means{width: width, sums: map[string][]float64{}, counts: map[string]int{}}
}

// Add counts one question's values in each of the groups.
func (m *Means) Add(values []float64, groups ...string) {
	if len(values) != m.width {
		panic(fmt.Sprintf("eval: %d values for a table of width %d", len(values), m.width))
	}
	for _, g := range groups {
		s, ok := m.sums[g]
		if !ok {
			s = make([]float64, m.width)
			m.sums[g] = s
			m.order = append(m.order, g)
		}
		for i, v := range values {
			s[i] += v
		}
		m.counts[g]++
	}
}

// Mean returns how many questions a group holds and the mean of each value; nil means when it holds none.
func (m *Means) Mean(group string) (n int, means []float64) {
	n = m.counts[group]
	if n == 0 {
		return 0, nil
	}
	means = make([]float64, m.width)
	for i, s := range m.sums[group] {
		means[i] = s / float64(n)
	}
	return n, means
}

// Groups lists the groups in the order they were first added.
func (m *Means) Groups() []string { return slices.Clone(m.order) }

// Percentile returns the p-th percentile (0 < p ≤ 100) of ds by the nearest-rank method: the smallest value
// with at least p% of the values at or below it. It is 0 for no values. ds need not be sorted.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}
