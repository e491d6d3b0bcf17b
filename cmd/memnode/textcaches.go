package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/memcluster/memcluster/fulltext"
)

// registerTextCaches exports the full-text caches of the node's shard indexes (fulltext.Meter): what they hold
// and how often a search finds its entry there, per kind of cache.
func registerTextCaches(reg prometheus.Registerer, m *fulltext.Meter) {
	for _, c := range []struct {
		name   string
		counts *fulltext.CacheCounts
	}{{"user_postings", &m.UserPostings}, {"decoded_postings", &m.DecodedPostings}} {
		labels := prometheus.Labels{"cache": c.name}
		counts := c.counts
		reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "memcluster_fulltext_cache_bytes", ConstLabels: labels,
				Help: "bytes the full-text caches of this node's shard indexes hold (user_postings: users' documents per segment; decoded_postings: long posting lists kept decoded)"},
				func() float64 { return float64(counts.Bytes()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "memcluster_fulltext_cache_hits_total", ConstLabels: labels,
				Help: "look-ups of the full-text caches that found their entry"},
				func() float64 { return float64(counts.Hits()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "memcluster_fulltext_cache_misses_total", ConstLabels: labels,
				Help: "look-ups of the full-text caches that read their entry from the segment"},
				func() float64 { return float64(counts.Misses()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "memcluster_fulltext_cache_evictions_total", ConstLabels: labels,
				Help: "entries of the full-text caches that left to make room for others"},
				func() float64 { return float64(counts.Evictions()) }))
	}
}
