package openaihttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Poster posts JSON to one URL. Every field is required except APIKey and StopAtDeadline; the providers fill
// them from their own options (with their own defaults).
type Poster struct {
	URL         string
	APIKey      string // sent as "Authorization: Bearer"; masked in error messages
	Timeout     time.Duration
	MaxRetries  int
	MinBackoff  time.Duration
	MaxBackoff  time.Duration
	MaxResponse int64
	Client      *http.Client
	// StatusErr is what a *StatusError unwraps to (the provider's sentinel).
	StatusErr error
	// StopAtDeadline returns the last error at once when the next delay would outlive ctx's deadline.
	StopAtDeadline bool
}

// StatusError is a non-2xx answer. It unwraps to the provider's sentinel.
type StatusError struct {
	Code    int    // HTTP status code
	Status  string // e.g. "429 Too Many Requests"
	Message string // the server's error message, or the start of its body; the API key is masked
	kind    error
}

func (e *StatusError) Error() string {
	if e.Message == "" {
		return "HTTP " + e.Status
	}
	return "HTTP " + e.Status + ": " + e.Message
}

// Unwrap makes errors.Is(err, provider.ErrHTTPStatus) true.
func (e *StatusError) Unwrap() error { return e.kind }

// Post sends body and returns the 2xx answer's bytes, retrying what may succeed later.
func (p *Poster) Post(ctx context.Context, body []byte) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		data, retry, after, err := p.attempt(ctx, body)
		if err == nil {
			return data, nil
		}
		d := p.backoff(attempt, after)
		if !retry || attempt >= p.MaxRetries || ctx.Err() != nil || (p.StopAtDeadline && beyondDeadline(ctx, d)) {
			if attempt > 0 {
				err = fmt.Errorf("after %d attempts: %w", attempt+1, err)
			}
			return nil, err
		}
		if err := sleep(ctx, d); err != nil {
			return nil, err
		}
	}
}

// attempt makes one request. after is the server's Retry-After, or -1.
func (p *Poster) attempt(ctx context.Context, body []byte) (data []byte, retry bool, after time.Duration, err error) {
	actx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, p.URL, bytes.NewReader(body))
	if err != nil {
		return nil, false, -1, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if p.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.APIKey)
	}
	resp, err := p.Client.Do(req)
	if err != nil {
		return nil, true, -1, err // the URL (password stripped) is in the *url.Error
	}
	defer resp.Body.Close()
	data, err = io.ReadAll(io.LimitReader(resp.Body, p.MaxResponse))
	if err != nil {
		return nil, true, -1, fmt.Errorf("read answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		se := &StatusError{Code: resp.StatusCode, Status: resp.Status, Message: p.mask(errorMessage(data)), kind: p.StatusErr}
		retry := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
		return nil, retry, retryAfter(resp.Header.Get("Retry-After")), se
	}
	return data, false, -1, nil
}

// mask hides the API key in text that came from the server: some echo a rejected key in their error
// message, and that message ends up in logs.
func (p *Poster) mask(s string) string {
	if p.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, p.APIKey, "[redacted]")
}

// errorMessage digs the message out of the error shapes servers use: OpenAI/Ollama {"error":{"message"}},
// TEI {"error":"..."}, vLLM {"message"}, FastAPI {"detail"}; otherwise the start of the body.
func errorMessage(body []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &e) == nil {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
			return obj.Message
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			return s
		case e.Message != "":
			return e.Message
		case json.Unmarshal(e.Detail, &s) == nil && s != "":
			return s
		}
	}
	msg := strings.TrimSpace(string(body))
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return msg
}

// retryAfter parses delay-seconds or an HTTP date; -1 when absent or invalid.
func retryAfter(v string) time.Duration {
	if v == "" {
		return -1
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return -1
}

// backoff is MinBackoff·2^attempt with ±25% jitter (so clients that failed together do not retry together), or
// the server's Retry-After; both capped by MaxBackoff.
func (p *Poster) backoff(attempt int, after time.Duration) time.Duration {
	if after >= 0 {
		return min(after, p.MaxBackoff)
	}
	d := p.MinBackoff << min(attempt, 30)
	if d <= 0 || d > p.MaxBackoff {
		d = p.MaxBackoff
	}
	jitter := time.Duration(rand.Int64N(int64(d)/2 + 1))
	return d*3/4 + jitter
}

func beyondDeadline(ctx context.Context, d time.Duration) bool {
	dl, ok := ctx.Deadline()
	return ok && time.Until(dl) < d
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
