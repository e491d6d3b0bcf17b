package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/memcluster/memcluster/retrieval"
)

// registerIndexers exports how long replicas' full-text batches wait for their turns (retrieval.Indexers): a
// growing wait means the full-text indexes fall further behind (a linearizable search hurries its own past);
// the priority the turns build at; and the vectors' checkpoints the replicas write.
func registerIndexers(reg prometheus.Registerer, g *retrieval.Indexers) {
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "memcluster_index_batches_waiting",
			Help: "replicas' full-text batches waiting for a turn to be built"},
			func() float64 { return float64(g.Stats().Waiting) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "memcluster_index_wait_seconds_total",
			Help: "time replicas' full-text batches waited for turns to be built"},
			func() float64 { return g.Stats().Waited.Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "memcluster_index_build_nice",
			Help: "nice value of the thread the last full-text batch built in a turn ran at (below the process's " +
				"priority on Linux; the process's where it cannot be lowered)"},
			func() float64 { return float64(g.Stats().Nice) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "memcluster_index_checkpoints_total",
			Help: "vector checkpoints written by this node's replicas"},
			func() float64 { return float64(g.Stats().Checkpoints) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "memcluster_index_checkpoint_seconds_total",
			Help: "time this node's replicas spent writing vector checkpoints"},
			func() float64 { return g.Stats().CheckpointTime.Seconds() }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "memcluster_index_checkpoint_bytes_total",
			Help: "bytes of the vector checkpoints this node's replicas wrote"},
			func() float64 { return float64(g.Stats().CheckpointBytes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "memcluster_index_backlog",
			Help: "changes this node's replicas hold for their full-text indexes, gathered or in a batch being " +
				"built (new writes are refused above --overload-backlog)"},
			func() float64 { return float64(g.Backlog()) }))
}
