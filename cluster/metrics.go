package cluster

import (
	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	halted     prometheus.Counter
	forwarded  *prometheus.CounterVec
	rpcRetries prometheus.Counter
	// shardOps times each shard operation this node coordinates, from routing to answer, retries included: a read
	// with its barrier when linearizable, a proposal's commit and apply on the leader, or either's round trip to
	// the node leading the shard.
	shardOps *prometheus.HistogramVec
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
	// Splits, by outcome (begun, proposed, done, failed), and requests sent on after a shard refused a user
	// it gave away in a split.
	splits    *prometheus.CounterVec
	redirects prometheus.Counter
	// prunedResults counts request results deleted by the prune entries this node proposed as a shard leader.
	prunedResults prometheus.Counter
	// Heartbeat coalescing (heartbeats.go): empty AppendEntries sent in batches, the batches, those sent on
	// their group's own connection because the peer's heartbeat stream was unavailable, and those received.
	heartbeatsCoalesced prometheus.Counter
	heartbeatBatches    prometheus.Counter
	heartbeatsDirect    prometheus.Counter
	heartbeatsReceived  prometheus.Counter
	// Lazy snapshots (lazysnap.go) turned into the shard's state to be sent, and the bytes written.
	snapshotsMaterialized     prometheus.Counter
	snapshotMaterializedBytes prometheus.Counter
	// indexesLoading counts replicas whose groups run while their indexes load behind them (loading.go).
	indexesLoading prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer, n *Node) *metrics {
	m := &metrics{
		indexesLoading: prometheus.NewGauge(prometheus.GaugeOpts{Name: "memcluster_replica_indexes_loading",
			Help: "Replicas taking part in their raft groups while their indexes load (after a restart)."}),
		halted: prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_replica_halted_total",
			Help: "Shard replicas stopped on an entry they could not decode, or because their indexes failed to load."}),
		forwarded: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memcluster_shard_rpc_total",
			Help: "Shard operations sent to another node, by operation and outcome."}, []string{"op", "outcome"}),
		rpcRetries: prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_shard_rpc_retries_total",
			Help: "Shard operations retried because the leader moved or was unknown."}),
		shardOps: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "memcluster_shard_op_seconds",
			Help:    "Shard operations coordinated by this node, by operation and whether stale reads were allowed, retries included.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}, []string{"op", "stale"}),
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
		splits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memcluster_shard_splits_total",
			Help: "Shard split steps by outcome (begun, proposed, done, failed)."}, []string{"outcome"}),
		redirects: prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_shard_redirects_total",
			Help: "Requests routed again after a shard refused a user its split gave away."}),
		prunedResults: prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_request_results_pruned_total",
			Help: "Request results past the retention deleted by prune entries this node proposed as shard leader (every replica deletes the same)."}),
		heartbeatsCoalesced: prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_raft_heartbeats_coalesced_total",
			Help: "Empty AppendEntries (heartbeats, commit refreshes) of shard groups sent in a node-to-node batch."}),
		heartbeatBatches: prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_raft_heartbeat_batches_total",
			Help: "Batches of coalesced empty AppendEntries sent."}),
		heartbeatsDirect: prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_raft_heartbeats_direct_total",
			Help: "Empty AppendEntries sent on their group's own connection because the peer's heartbeat stream was unavailable."}),
		heartbeatsReceived: prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_raft_heartbeats_received_total",
			Help: "Coalesced empty AppendEntries received and handed to their groups."}),
		snapshotsMaterialized: prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_snapshots_materialized_total",
			Help: "Shard snapshot markers turned into the shard's state when opened (to send to a follower)."}),
		snapshotMaterializedBytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_snapshot_materialized_bytes_total",
			Help: "Bytes of shard state written for materialized snapshots."}),
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
	cacheHits := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "memcluster_record_cache_hits_total",
		Help: "Record reads (a search's answers, a get) answered from the record cache."},
		func() float64 { return float64(n.db.RecordCacheStats().Hits) })
	cacheMisses := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "memcluster_record_cache_misses_total",
		Help: "Record reads that missed the record cache and read Pebble."},
		func() float64 { return float64(n.db.RecordCacheStats().Misses) })
	for _, c := range []prometheus.Collector{cacheHits, cacheMisses, m.indexesLoading, m.halted, m.forwarded, m.rpcRetries, m.shardOps, m.fanoutPartial, m.leaderShed,
		replicas, leaders, m.movesStarted, m.movesFinished, m.moveStepsFailed, m.movedBytes, m.movesInFlight,
		m.transfers, m.replicaImbalance, m.leaderImbalance, m.splits, m.redirects, m.prunedResults,
		m.heartbeatsCoalesced, m.heartbeatBatches, m.heartbeatsDirect, m.heartbeatsReceived,
		m.snapshotsMaterialized, m.snapshotMaterializedBytes} {
		_ = reg.Register(c)
	}
	return m
}
