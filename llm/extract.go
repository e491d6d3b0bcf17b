package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memcluster/memcluster/consolidation"
)

// ExtractorOptions configures an Extractor. Zero fields take the stated defaults.
type ExtractorOptions struct {
	Client  *Client       // required
	Timeout time.Duration // per message, retries included; default 10s
	// BreakerFailures consecutive provider failures (transport, timeout, HTTP error, bad
	// envelope) pause calls for BreakerCooldown: a dead provider then costs a flush nothing
	// instead of a timeout per message. Default 3; negative never pauses.
	BreakerFailures int
	BreakerCooldown time.Duration         // default 30s
	Logger          *slog.Logger          // default: discard
	Registerer      prometheus.Registerer // nil: counters are kept but not exported
	Now             func() time.Time      // the breaker's clock; default time.Now
}

// Extractor defaults.
const (
	defaultExtractTimeout  = 10 * time.Second
	defaultBreakerFailures = 3
	defaultBreakerCooldown = 30 * time.Second
)

func (o ExtractorOptions) withDefaults() ExtractorOptions {
	if o.Timeout == 0 {
		o.Timeout = defaultExtractTimeout
	}
	fallbackDefaults(&o.BreakerFailures, &o.BreakerCooldown, &o.Logger, &o.Now)
	return o
}

// fallbackDefaults fills the settings the extractor and the reranker share: the breaker, the log, the clock.
func fallbackDefaults(failures *int, cooldown *time.Duration, log **slog.Logger, now *func() time.Time) {
	if *failures == 0 {
		*failures = defaultBreakerFailures
	}
	if *cooldown == 0 {
		*cooldown = defaultBreakerCooldown
	}
	if *log == nil {
		*log = slog.New(slog.DiscardHandler)
	}
	if *now == nil {
		*now = time.Now
	}
}

// Validate reports the first invalid field, after defaults are applied.
func (o ExtractorOptions) Validate() error {
	o = o.withDefaults()
	switch {
	case o.Client == nil:
		return fmt.Errorf("%w: llm extractor: client is required", ErrInvalidOptions)
	case o.Timeout < 0 || o.BreakerCooldown < 0:
		return fmt.Errorf("%w: llm extractor: timeout and breaker cooldown must be positive", ErrInvalidOptions)
	}
	return nil
}

// Extractor extracts facts from user messages with a chat model and falls back to the
// rules (consolidation.Extract) whenever the model cannot be used. Safe for concurrent use.
type Extractor struct {
	opt ExtractorOptions
	m   *metrics
	br  *breaker
}

// NewExtractor returns an extractor; it makes no request until a message comes.
func NewExtractor(opt ExtractorOptions) (*Extractor, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt = opt.withDefaults()
	return &Extractor{opt: opt, m: newMetrics(opt.Registerer),
		br: &breaker{threshold: opt.BreakerFailures, cooldown: opt.BreakerCooldown, now: opt.Now}}, nil
}

// Func is the extractor as a consolidation.ExtractFunc (server.Options.Extract).
func (e *Extractor) Func() consolidation.ExtractFunc { return e.Extract }

// Extract asks the model about one user message. Assistant and tool messages go to the
// rules without a call: they yield no facts anyway, and every call costs. On any failure
// the rules answer instead, and the failure is logged and counted by reason.
func (e *Extractor) Extract(m consolidation.Message) ([]consolidation.Candidate, []consolidation.Rejection) {
	if m.Role != consolidation.RoleUser || strings.TrimSpace(m.Content) == "" {
		return consolidation.Extract(m)
	}
	if !e.br.allow() {
		e.m.fallbacks.WithLabelValues(reasonBreaker).Inc()
		e.opt.Logger.Debug("llm extraction paused after provider failures; using the rules", "message", m.ID)
		return consolidation.Extract(m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.opt.Timeout)
	defer cancel()
	out, err := e.opt.Client.Complete(ctx, systemPrompt, m.Content)
	if err == nil {
		cands, rejs, perr := parse(out, m)
		if perr == nil {
			e.br.record(true)
			e.m.ok.Inc()
			return cands, rejs
		}
		err = perr
	}
	return e.fallback(m, err)
}

// fallback logs and counts one failure, then lets the rules answer.
func (e *Extractor) fallback(m consolidation.Message, err error) ([]consolidation.Candidate, []consolidation.Rejection) {
	reason := classify(err)
	e.m.fallbacks.WithLabelValues(reason).Inc()
	e.opt.Logger.Warn("llm extraction failed; using the rules", "reason", reason, "message", m.ID,
		"provider", e.opt.Client.String(), "err", err)
	if providerFault(reason) && e.br.record(false) {
		e.opt.Logger.Warn("llm provider keeps failing: extraction uses the rules for a while",
			"failures", e.opt.BreakerFailures, "pause", e.opt.BreakerCooldown)
	}
	return consolidation.Extract(m)
}

// Fallback reasons, the label of memcluster_llm_extract_fallbacks_total.
const (
	reasonTimeout     = "timeout"        // the per-message timeout or a per-attempt one
	reasonTransport   = "transport"      // connection refused, reset, DNS
	reasonHTTP        = "http_status"    // a non-2xx answer, after retries
	reasonBadResponse = "bad_response"   // a 2xx answer that is not a usable chat completion
	reasonMalformed   = "malformed_json" // the model's content is not one JSON object
	reasonSchema      = "schema"         // JSON that violates the extraction schema
	reasonBreaker     = "breaker_open"   // not called: the provider failed repeatedly just before
)

var allReasons = []string{reasonTimeout, reasonTransport, reasonHTTP, reasonBadResponse, reasonMalformed,
	reasonSchema, reasonBreaker}

func classify(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, ErrSchema):
		return reasonSchema
	case errors.Is(err, ErrMalformed):
		return reasonMalformed
	case errors.Is(err, ErrBadResponse):
		return reasonBadResponse
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return reasonTimeout
	case errors.Is(err, ErrHTTPStatus):
		return reasonHTTP
	}
	return reasonTransport
}

// providerFault says the provider, not the model's answer to this message, failed.
func providerFault(reason string) bool {
	return reason != reasonSchema && reason != reasonMalformed
}
