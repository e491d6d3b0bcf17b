package llm

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/prometheus/client_golang/prometheus"
)

// teiRequest is TEI's POST /rerank body; its answer is []rerankHit with "score".
type teiRequest struct {
	Query string   `json:"query"`
	Texts []string `json:"texts"`
}

// cohereRequest is the Cohere/Jina POST /v1/rerank body; its answer is {"results": [...]} with
// "relevance_score". No top_n: every document must come back scored.
type cohereRequest struct {
	Model     string   `json:"model,omitempty"`
	Query     string   `json:"query"`
	Documents []string `json:"documents"`
}

type rerankHit struct {
	Index          *int     `json:"index"`
	Score          *float64 `json:"score"`
	RelevanceScore *float64 `json:"relevance_score"`
}

func rerankBody(cohere bool, model, query string, texts []string) ([]byte, error) {
	if cohere {
		return json.Marshal(cohereRequest{Model: model, Query: query, Documents: texts})
	}
	return json.Marshal(teiRequest{Query: query, Texts: texts})
}

// parseRerank reads an answer into one score per text; an answer that misses a text, names one twice or out
// of range, or carries no finite score is ErrBadResponse: half an order is no order.
func parseRerank(cohere bool, data []byte, n int) ([]float64, error) {
	var hits []rerankHit
	if cohere {
		var env struct {
			Results []rerankHit `json:"results"`
		}
		if err := json.Unmarshal(data, &env); err != nil {
			return nil, fmt.Errorf("%w: rerank: not {\"results\": [...]}: %v", ErrBadResponse, err)
		}
		hits = env.Results
	} else if err := json.Unmarshal(data, &hits); err != nil {
		return nil, fmt.Errorf("%w: rerank: not [{index, score}]: %v", ErrBadResponse, err)
	}
	if len(hits) != n {
		return nil, fmt.Errorf("%w: rerank: %d scores for %d texts", ErrBadResponse, len(hits), n)
	}
	scores, seen := make([]float64, n), make([]bool, n)
	for _, h := range hits {
		s := h.Score
		if cohere {
			s = h.RelevanceScore
		}
		switch {
		case h.Index == nil || *h.Index < 0 || *h.Index >= n || seen[*h.Index]:
			return nil, fmt.Errorf("%w: rerank: missing, repeated or out-of-range index", ErrBadResponse)
		case s == nil || math.IsNaN(*s) || math.IsInf(*s, 0):
			return nil, fmt.Errorf("%w: rerank: index %d has no finite score", ErrBadResponse, *h.Index)
		}
		seen[*h.Index], scores[*h.Index] = true, *s
	}
	return scores, nil
}

type rerankMetrics struct {
	ok        prometheus.Counter
	fallbacks *prometheus.CounterVec
}

// Rerank fallback reasons are the extractor's, less the model-output ones.
var rerankReasons = []string{reasonTimeout, reasonTransport, reasonHTTP, reasonBadResponse, reasonBreaker}

func newRerankMetrics(reg prometheus.Registerer) *rerankMetrics {
	m := &rerankMetrics{
		ok: register(reg, prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_rerank_total",
			Help: "Searches whose top candidates the rerank model ordered."})),
		fallbacks: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memcluster_rerank_fallbacks_total",
			Help: "Searches that kept their own order because the rerank model could not be used, by reason."}, []string{"reason"})),
	}
	for _, r := range rerankReasons {
		m.fallbacks.WithLabelValues(r)
	}
	return m
}
