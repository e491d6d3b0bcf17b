package embed

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/memcluster/memcluster/internal/openaihttp"
)

// OpenAIOptions configures a client for an OpenAI-compatible /embeddings
// endpoint (OpenAI, Ollama, vLLM, TEI, LM Studio). Zero fields take the
// stated defaults; a negative MaxRetries means no retries.
type OpenAIOptions struct {
	BaseURL    string        // e.g. "http://localhost:11434/v1"; required; "/embeddings" is appended
	APIKey     string        // sent as "Authorization: Bearer"; empty sends no header; never in the fingerprint
	Model      string        // required
	Dim        int           // expected vector length; 0 learns it from the first answer
	Timeout    time.Duration // per HTTP attempt; default 30s
	BatchSize  int           // texts per request; default 64
	MaxRetries int           // retries after a 429, a 5xx or a transport error; default 3
	MinBackoff time.Duration // first retry delay, doubled each retry; default 500ms
	MaxBackoff time.Duration // cap on any delay, Retry-After included; default 30s
	Client     *http.Client  // default: a client with no overall timeout (Timeout bounds each attempt)
}

// OpenAI defaults.
const (
	defaultTimeout    = 30 * time.Second
	defaultBatchSize  = 64
	defaultMaxRetries = 3
	defaultMinBackoff = 500 * time.Millisecond
	defaultMaxBackoff = 30 * time.Second
)

func (o OpenAIOptions) withDefaults() OpenAIOptions {
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	if o.Timeout == 0 {
		o.Timeout = defaultTimeout
	}
	if o.BatchSize == 0 {
		o.BatchSize = defaultBatchSize
	}
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = defaultMaxRetries
	case o.MaxRetries < 0:
		o.MaxRetries = 0
	}
	if o.MinBackoff == 0 {
		o.MinBackoff = defaultMinBackoff
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = max(defaultMaxBackoff, o.MinBackoff)
	}
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	return o
}

// Validate reports the first invalid field, after defaults are applied.
func (o OpenAIOptions) Validate() error {
	o = o.withDefaults()
	u, err := url.Parse(o.BaseURL)
	switch {
	case o.BaseURL == "":
		return fmt.Errorf("%w: openai: base URL is required", ErrInvalidOptions)
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("%w: openai: base URL %q is not an http(s) URL", ErrInvalidOptions, o.BaseURL)
	case o.Model == "":
		return fmt.Errorf("%w: openai: model is required", ErrInvalidOptions)
	case o.Dim < 0:
		return fmt.Errorf("%w: openai: dim %d is negative", ErrInvalidOptions, o.Dim)
	case o.Timeout < 0 || o.MinBackoff < 0 || o.MaxBackoff < o.MinBackoff:
		return fmt.Errorf("%w: openai: timeout and backoffs must be positive, min backoff <= max", ErrInvalidOptions)
	case o.BatchSize < 1:
		return fmt.Errorf("%w: openai: batch size %d below 1", ErrInvalidOptions, o.BatchSize)
	}
	return nil
}

// OpenAI embeds texts through an OpenAI-compatible HTTP API. Safe for concurrent use.
type OpenAI struct {
	opt  OpenAIOptions
	http *openaihttp.Poster
	dim  atomic.Int64 // configured, or learned from the first answer
	fp   string
}

// NewOpenAI returns a client; it makes no request until Embed.
func NewOpenAI(opt OpenAIOptions) (*OpenAI, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt = opt.withDefaults()
	c := &OpenAI{opt: opt, http: &openaihttp.Poster{URL: opt.BaseURL + "/embeddings", APIKey: opt.APIKey,
		Timeout: opt.Timeout, MaxRetries: opt.MaxRetries, MinBackoff: opt.MinBackoff, MaxBackoff: opt.MaxBackoff,
		MaxResponse: maxResponseBytes, Client: opt.Client, StatusErr: ErrHTTPStatus}}
	c.dim.Store(int64(opt.Dim))
	// The API key is left out: it does not change vectors and must not leak.
	c.fp = fmt.Sprintf("openai/%s/%s", opt.Model, opt.BaseURL)
	if opt.Dim > 0 {
		c.fp += fmt.Sprintf("/d%d", opt.Dim)
	}
	return c, nil
}

// Dim returns the vector length: the configured one, or the one learned from
// the first answer (0 before that).
func (c *OpenAI) Dim() int { return int(c.dim.Load()) }

// Fingerprint is "openai/{model}/{base URL}[/d{dim}]".
func (c *OpenAI) Fingerprint() string { return c.fp }

// Embed sends the non-empty texts in batches of BatchSize, one request at a
// time; empty texts get zero vectors without a round trip, because most
// servers reject empty input.
func (c *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var idx []int
	var batch []string
	for i, t := range texts {
		if t == "" {
			continue
		}
		idx, batch = append(idx, i), append(batch, t)
		if len(batch) == c.opt.BatchSize {
			if err := c.embedBatch(ctx, batch, idx, out); err != nil {
				return nil, err
			}
			idx, batch = idx[:0], batch[:0]
		}
	}
	if len(batch) > 0 {
		if err := c.embedBatch(ctx, batch, idx, out); err != nil {
			return nil, err
		}
	}
	return c.fillEmpty(out)
}

func (c *OpenAI) embedBatch(ctx context.Context, batch []string, idx []int, out [][]float32) error {
	vecs, err := c.post(ctx, batch)
	if err != nil {
		return fmt.Errorf("embed batch: %w", err)
	}
	for j, v := range vecs {
		normalize(v)
		out[idx[j]] = v
	}
	return nil
}

// fillEmpty gives the skipped empty texts a zero vector of the model's length.
func (c *OpenAI) fillEmpty(out [][]float32) ([][]float32, error) {
	for i, v := range out {
		if v != nil {
			continue
		}
		dim := c.Dim()
		if dim == 0 {
			return nil, fmt.Errorf("openai embed: empty text: %w", ErrDimUnknown)
		}
		out[i] = make([]float32, dim)
	}
	return out, nil
}

// checkDim learns the dimension from the first answer and enforces it after.
func (c *OpenAI) checkDim(got int) error {
	if got == 0 {
		return fmt.Errorf("%w: empty embedding", ErrBadResponse)
	}
	if c.dim.CompareAndSwap(0, int64(got)) {
		return nil
	}
	if want := c.Dim(); got != want {
		return fmt.Errorf("%w: dimension %d, want %d", ErrBadResponse, got, want)
	}
	return nil
}
