package llm

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	ok        prometheus.Counter
	fallbacks *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		ok: register(reg, prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_llm_extract_total",
			Help: "Messages whose facts the LLM extracted (valid answers)."})),
		fallbacks: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memcluster_llm_extract_fallbacks_total",
			Help: "Messages the rules extracted because the LLM could not be used, by reason."}, []string{"reason"})),
	}
	for _, r := range allReasons {
		m.fallbacks.WithLabelValues(r) // every reason exported at 0, so a rate() sees the first failure
	}
	return m
}

// register adds c to reg; if an identical collector is already there (a second
// extractor on the same registry), that one is used so both count in one place.
func register[T prometheus.Collector](reg prometheus.Registerer, c T) T {
	if reg == nil {
		return c
	}
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if ex, ok := are.ExistingCollector.(T); ok {
				return ex
			}
		}
	}
	return c
}
