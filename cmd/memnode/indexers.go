package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/memcluster/memcluster/retrieval"
)

// registerIndexers exports how long follower replicas' full-text batches wait for their turns (retrieval.Indexers):
// a growing wait means stale searches on followers fall further behind.
func registerIndexers(reg prometheus.Registerer, g *retrieval.Indexers) {
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "memcluster_follower_index_batches_waiting",
			Help: "follower replicas' full-text batches waiting for a turn to be built"},
			func() float64 { return float64(g.Stats().Waiting) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "memcluster_follower_index_wait_seconds_total",
			Help: "time follower replicas' full-text batches waited for turns to be built"},
			func() float64 { return g.Stats().Waited.Seconds() }))
}
