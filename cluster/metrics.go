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
	// Rebalancing, kept by the meta leader (moveSteps by shard leaders): moves started by reason, finished,
	// failed steps, bytes of the shards whose moves finished, moves under way, and the spread (max - min) of
	// replicas and of leaders over eligible nodes.
	movesStarted     *prometheus.CounterVec
	movesFinished    prometheus.Counter
	moveStepsFailed  *prometheus.CounterVec
	movedBytes       prometheus.Counter
	movesInFlight    prometheus.Gauge
	transfers        *prometheus.CounterVec
	replicaImbalance prometheus.Gauge
	leaderImbalance  prometheus.Gauge
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
		movesStarted: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memcluster_moves_started_total",
			Help: "Replica moves placed by the meta leader, by reason (repair, drain, zone, balance)."}, []string{"reason"}),
		movesFinished: prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_moves_finished_total",
			Help: "Shards whose raft membership converged to a changed placement."}),
		moveStepsFailed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memcluster_move_steps_failed_total",
			Help: "Membership changes a shard leader tried and raft refused or timed out, by step."}, []string{"step"}),
		movedBytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_moved_bytes_total",
			Help: "Estimated bytes of the shards whose moves finished."}),
		movesInFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "memcluster_moves_in_progress",
			Help: "Shards whose membership has not yet converged to the placement."}),
		transfers: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memcluster_leader_transfers_total",
			Help: "Leadership transfers started by the meta leader, by reason (drain, balance)."}, []string{"reason"}),
		replicaImbalance: prometheus.NewGauge(prometheus.GaugeOpts{Name: "memcluster_replica_imbalance",
			Help: "Max minus min shard replicas over eligible nodes (meta leader's view)."}),
		leaderImbalance: prometheus.NewGauge(prometheus.GaugeOpts{Name: "memcluster_leader_imbalance",
			Help: "Max minus min shard leaders over eligible nodes (meta leader's view)."}),
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
	for _, c := range []prometheus.Collector{m.halted, m.forwarded, m.rpcRetries, m.fanoutPartial, m.leaderShed,
		replicas, leaders, m.movesStarted, m.movesFinished, m.moveStepsFailed, m.movedBytes, m.movesInFlight,
		m.transfers, m.replicaImbalance, m.leaderImbalance} {
		_ = reg.Register(c)
	}
	return m
}
