package cluster

import (
	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	halted     prometheus.Counter
	forwarded  *prometheus.CounterVec
	rpcRetries prometheus.Counter
	// fanoutPartial counts shards missing from fan-out answers (deadline or error).
	fanoutPartial prometheus.Counter
	// leaderShed counts leadership transfers started because this node's disk turned read-only.
	leaderShed prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, n *Node) *metrics {
	m := &metrics{
		halted: prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_replica_halted_total",
			Help: "Shard replicas stopped on an entry they could not decode."}),
		forwarded: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memcluster_shard_rpc_total",
			Help: "Shard operations sent to another node, by operation and outcome."}, []string{"op", "outcome"}),
		rpcRetries: prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_shard_rpc_retries_total",
			Help: "Shard operations retried because the leader moved or was unknown."}),
		fanoutPartial: prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_fanout_shard_failures_total",
			Help: "Shards left out of a fan-out answer because they erred or missed their deadline."}),
		leaderShed: prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_leadership_shed_total",
			Help: "Shard leadership transfers started because this node's disk is read-only."}),
	}
	replicas := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "memcluster_local_replicas",
		Help: "Shard replicas hosted by this node."}, func() float64 { return float64(len(n.LocalShards())) })
	leaders := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "memcluster_local_leaders",
		Help: "Shards this node leads."}, func() float64 {
		c := 0
		for _, s := range n.LocalShards() {
			if r, ok := n.Replica(s); ok && r.IsLeader() {
				c++
			}
		}
		return float64(c)
	})
	for _, c := range []prometheus.Collector{m.halted, m.forwarded, m.rpcRetries, m.fanoutPartial, m.leaderShed, replicas, leaders} {
		_ = reg.Register(c)
	}
	return m
}
