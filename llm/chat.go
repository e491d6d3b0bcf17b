package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/memcluster/memcluster/internal/openaihttp"
)

// Options configures a client for an OpenAI-compatible /chat/completions endpoint
// (OpenAI, Ollama, vLLM, llama.cpp, LM Studio). Zero fields take the stated defaults; a
// negative MaxRetries means no retries.
type Options struct {
	BaseURL     string        // e.g. "http://localhost:11434/v1"; required; "/chat/completions" is appended
	APIKey      string        // sent as "Authorization: Bearer"; empty sends no header; never logged
	Model       string        // required
	Timeout     time.Duration // per HTTP attempt; default 20s
	MaxRetries  int           // retries after a 429, a 5xx or a transport error; default 2
	MinBackoff  time.Duration // first retry delay, doubled each retry; default 500ms
	MaxBackoff  time.Duration // cap on any delay, Retry-After included; default 5s
	Temperature float64       // default 0: extraction wants the most likely answer, not variety
	MaxTokens   int           // bound on the answer's tokens; 0 sends none (the server's default)
	Client      *http.Client  // default: a client with no overall timeout (Timeout bounds each attempt)
}

// Client defaults.
const (
	defaultTimeout    = 20 * time.Second
	defaultMaxRetries = 2
	defaultMinBackoff = 500 * time.Millisecond
	defaultMaxBackoff = 5 * time.Second
)

func (o Options) withDefaults() Options {
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	if o.Timeout == 0 {
		o.Timeout = defaultTimeout
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
func (o Options) Validate() error {
	o = o.withDefaults()
	u, err := url.Parse(o.BaseURL)
	switch {
	case o.BaseURL == "":
		return fmt.Errorf("%w: llm: base URL is required", ErrInvalidOptions)
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("%w: llm: base URL %q is not an http(s) URL", ErrInvalidOptions, o.BaseURL)
	case o.Model == "":
		return fmt.Errorf("%w: llm: model is required", ErrInvalidOptions)
	case o.Timeout < 0 || o.MinBackoff < 0 || o.MaxBackoff < o.MinBackoff:
		return fmt.Errorf("%w: llm: timeout and backoffs must be positive, min backoff <= max", ErrInvalidOptions)
	case o.Temperature < 0 || o.Temperature > 2:
		return fmt.Errorf("%w: llm: temperature %g outside [0, 2]", ErrInvalidOptions, o.Temperature)
	case o.MaxTokens < 0:
		return fmt.Errorf("%w: llm: max tokens %d is negative", ErrInvalidOptions, o.MaxTokens)
	}
	return nil
}

// Client calls an OpenAI-compatible chat API. Safe for concurrent use.
type Client struct {
	opt  Options
	http *openaihttp.Poster
}

// New returns a client; it makes no request until Complete.
func New(opt Options) (*Client, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt = opt.withDefaults()
	return &Client{opt: opt, http: &openaihttp.Poster{URL: opt.BaseURL + "/chat/completions", APIKey: opt.APIKey,
		Timeout: opt.Timeout, MaxRetries: opt.MaxRetries, MinBackoff: opt.MinBackoff, MaxBackoff: opt.MaxBackoff,
		MaxResponse: maxResponseBytes, Client: opt.Client, StatusErr: ErrHTTPStatus, StopAtDeadline: true}}, nil
}

// String names the endpoint and model for logs; the API key is left out.
func (c *Client) String() string { return c.opt.Model + "@" + c.opt.BaseURL }

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model          string        `json:"model"`
	Messages       []chatMessage `json:"messages"`
	Temperature    float64       `json:"temperature"` // always sent: 0 is the point, not "unset"
	MaxTokens      int           `json:"max_tokens,omitempty"`
	ResponseFormat struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

// Complete sends a system and a user message, asks for a JSON object
// (response_format json_object) and returns the first choice's content. It retries
// 429s, 5xx and transport errors with backoff; ctx bounds the whole call.
func (c *Client) Complete(ctx context.Context, system, user string) (string, error) {
	req := chatRequest{Model: c.opt.Model, Temperature: c.opt.Temperature, MaxTokens: c.opt.MaxTokens,
		Messages: []chatMessage{{Role: "system", Content: system}, {Role: "user", Content: user}}}
	req.ResponseFormat.Type = "json_object"
	body, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("chat request: %w", err)
	}
	data, err := c.post(ctx, body)
	if err != nil {
		return "", fmt.Errorf("chat %s: %w", c.opt.Model, err)
	}
	return decodeContent(data)
}

// decodeContent takes the first choice's content out of a chat-completions answer.
func decodeContent(data []byte) (string, error) {
	var r chatResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadResponse, err)
	}
	switch {
	case len(r.Choices) == 0:
		return "", fmt.Errorf("%w: no choices", ErrBadResponse)
	case r.Choices[0].FinishReason == "length":
		return "", fmt.Errorf("%w: answer cut at the token limit", ErrBadResponse)
	case r.Choices[0].Message.Content == nil || strings.TrimSpace(*r.Choices[0].Message.Content) == "":
		return "", fmt.Errorf("%w: empty content", ErrBadResponse)
	}
	return *r.Choices[0].Message.Content, nil
}
