package llm

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memcluster/memcluster/internal/openaihttp"
)

// RerankerOptions configures a Reranker. Zero fields take the stated defaults.
type RerankerOptions struct {
	// URL is the rerank endpoint; required. Its path says the protocol: ".../v1/rerank" is Cohere/Jina
	// ({model, query, documents} → {results:[{index, relevance_score}]}), any other ".../rerank" is TEI
	// ({query, texts} → [{index, score}]).
	URL    string
	Model  string // sent in the Cohere/Jina form; optional
	APIKey string // sent as "Authorization: Bearer"; never logged
	// Timeout bounds one call; default 2s. There are no retries: a search does not wait for a second try.
	Timeout         time.Duration
	BreakerFailures int                   // consecutive failures that pause calls; default 3, negative never
	BreakerCooldown time.Duration         // default 30s
	Logger          *slog.Logger          // default: discard
	Registerer      prometheus.Registerer // nil: counters are kept but not exported
	Now             func() time.Time      // the breaker's clock; default time.Now
	Client          *http.Client          // default: a plain client (Timeout bounds the call)
}

// Reranker defaults.
const (
	defaultRerankTimeout = 2 * time.Second
	// maxRerankResponse bounds an answer: a score per text is a few KiB.
	maxRerankResponse = 1 << 20
)

func (o RerankerOptions) withDefaults() RerankerOptions {
	if o.Timeout == 0 {
		o.Timeout = defaultRerankTimeout
	}
	fallbackDefaults(&o.BreakerFailures, &o.BreakerCooldown, &o.Logger, &o.Now)
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	return o
}

// Validate reports the first invalid field, after defaults are applied.
func (o RerankerOptions) Validate() error {
	o = o.withDefaults()
	u, err := url.Parse(o.URL)
	switch {
	case o.URL == "":
		return fmt.Errorf("%w: rerank: URL is required", ErrInvalidOptions)
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("%w: rerank: URL %q is not an http(s) URL", ErrInvalidOptions, o.URL)
	case !strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/rerank"):
		return fmt.Errorf("%w: rerank: URL %q: want a path ending in /rerank (TEI) or /v1/rerank (Cohere, Jina)",
			ErrInvalidOptions, o.URL)
	case o.Timeout < 0 || o.BreakerCooldown < 0:
		return fmt.Errorf("%w: rerank: timeout and breaker cooldown must be positive", ErrInvalidOptions)
	}
	return nil
}

// Reranker scores texts against a query with a rerank model and says when it could not, so the caller keeps
// its own order. Safe for concurrent use.
type Reranker struct {
	opt    RerankerOptions
	cohere bool
	http   *openaihttp.Poster
	m      *rerankMetrics
	br     *breaker
}

// NewReranker returns a reranker; it makes no request until Scores.
func NewReranker(opt RerankerOptions) (*Reranker, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt = opt.withDefaults()
	u := strings.TrimRight(opt.URL, "/")
	return &Reranker{opt: opt, cohere: strings.HasSuffix(u, "/v1/rerank"),
		http: &openaihttp.Poster{URL: u, APIKey: opt.APIKey, Timeout: opt.Timeout, MaxResponse: maxRerankResponse,
			Client: opt.Client, StatusErr: ErrHTTPStatus, StopAtDeadline: true},
		m:  newRerankMetrics(opt.Registerer),
		br: &breaker{threshold: opt.BreakerFailures, cooldown: opt.BreakerCooldown, now: opt.Now}}, nil
}

// String names the endpoint for logs; the API key is left out.
func (r *Reranker) String() string { return r.http.URL }

// Scores returns one score per text (higher is more relevant) and true, or nil and false when the reranker
// could not be used — paused breaker, timeout, transport, HTTP error, an answer that does not score every
// text exactly once — after logging and counting why.
func (r *Reranker) Scores(ctx context.Context, query string, texts []string) ([]float64, bool) {
	if len(texts) == 0 {
		return nil, false
	}
	if !r.br.allow() {
		r.m.fallbacks.WithLabelValues(reasonBreaker).Inc()
		return nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, r.opt.Timeout)
	defer cancel()
	scores, err := r.call(ctx, query, texts)
	if err == nil {
		r.br.record(true)
		r.m.ok.Inc()
		return scores, true
	}
	reason := classify(err)
	r.m.fallbacks.WithLabelValues(reason).Inc()
	r.opt.Logger.Warn("rerank failed; keeping the search order", "reason", reason, "provider", r.String(), "err", err)
	if providerFault(reason) && r.br.record(false) {
		r.opt.Logger.Warn("rerank provider keeps failing: searches skip it for a while",
			"failures", r.opt.BreakerFailures, "pause", r.opt.BreakerCooldown)
	}
	return nil, false
}

func (r *Reranker) call(ctx context.Context, query string, texts []string) ([]float64, error) {
	body, err := rerankBody(r.cohere, r.opt.Model, query, texts)
	if err != nil {
		return nil, err
	}
	data, err := r.http.Post(ctx, body)
	if err != nil {
		return nil, fmt.Errorf("rerank: %w", err)
	}
	return parseRerank(r.cohere, data, len(texts))
}
