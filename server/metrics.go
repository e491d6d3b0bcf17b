package server

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	shed     prometheus.Counter
	limited  prometheus.Counter
	// overloaded: writes answered 503 because a node's storage was overloaded (this node's, or the shard
	// leader's).
	overloaded prometheus.Counter
	// Memory model: consolidation decisions by trigger and op, triggers fired, and user transactions redone
	// because the user's state changed while they were decided.
	decisions *prometheus.CounterVec
	triggers  *prometheus.CounterVec
	conflicts prometheus.Counter
	// reconfirmed: transactions decided again on confirmed reads because their first decision, on unconfirmed
	// reads, would have answered without a commit.
	reconfirmed prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memcluster_api_requests_total",
			Help: "API requests by operation and HTTP status."}, []string{"op", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "memcluster_api_request_seconds",
			Help: "API request latency by operation.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}, []string{"op"}),
	}
	m.shed = prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_api_shed_total",
		Help: "Requests answered 429 because the node had no free in-flight slot."})
	_ = reg.Register(m.shed)
	m.limited = prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_api_rate_limited_total",
		Help: "Requests answered 429 because their tenant was over its rate."})
	_ = reg.Register(m.limited)
	m.overloaded = prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_api_overloaded_total",
		Help: "Writes answered 503 overloaded: a node's compactions trailed its writes (this node's, or the shard leader's)."})
	_ = reg.Register(m.overloaded)
	m.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memcluster_consolidation_decisions_total",
		Help: "Fact decisions (ADD, UPDATE, DELETE, NONE) by trigger."}, []string{"trigger", "op"})
	m.triggers = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memcluster_consolidation_triggers_total",
		Help: "Consolidation triggers fired: flush, end, remember, consolidate, correction, anomaly, idle."}, []string{"trigger"})
	m.conflicts = prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_user_txn_conflicts_total",
		Help: "User transactions decided again because the user's state changed meanwhile."})
	m.reconfirmed = prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_user_txn_reconfirmed_total",
		Help: "User transactions decided again on confirmed reads because the first decision would not commit."})
	for _, c := range []prometheus.Collector{m.requests, m.latency, m.decisions, m.triggers, m.conflicts,
		m.reconfirmed} {
		_ = reg.Register(c)
	}
	return m
}

func (m *metrics) observe(op string, code int, d time.Duration) {
	m.requests.WithLabelValues(op, strconv.Itoa(code)).Inc()
	m.latency.WithLabelValues(op).Observe(d.Seconds())
}
