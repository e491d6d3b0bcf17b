// Package client is the Go client of the memcluster /v1 HTTP API.
//
// Any node answers any request: it forwards to the shard's leader itself, so a
// client needs only one address. With WithLeaderRouting a client sends each
// user's requests to the leader the cluster named for the user's shard, saving
// that hop.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/internal/httpjson"
)

// DefaultTimeout bounds each request when no WithTimeout option is given.
const DefaultTimeout = 10 * time.Second

// DefaultOverloadRetries is how many times a request refused as overloaded is sent again when no
// WithOverloadRetries option is given.
const DefaultOverloadRetries = 3

// The wait before such a retry is the answer's Retry-After within these bounds (a proxy may send none, or 0).
const (
	minOverloadWait = 250 * time.Millisecond
	maxOverloadWait = 5 * time.Second
)

// overloadRetryMargin is the time a retry must have left after its wait: a node may hold a write for up to its
// --overload-wait (1 s) at each of two checks before it answers.
const overloadRetryMargin = 2 * time.Second

// maxErrorBody caps how much of an error answer is read: enough for any
// apiv1.Error, small enough that a misbehaving proxy cannot flood us.
const maxErrorBody = 64 << 10

// Client talks to one memcluster node. It is safe for concurrent use.
type Client struct {
	base    *url.URL
	hc      *http.Client
	timeout time.Duration
	token   string
	routes  *router // nil: every request goes to base (WithLeaderRouting)
	// overloadRetries: times a request refused as overloaded is sent again (WithOverloadRetries).
	overloadRetries int
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the http.Client used for requests (default
// http.DefaultClient). The client is not modified; the timeout is applied per
// request through the context.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithTimeout bounds each request, including reading the answer. Zero means no
// bound beyond the caller's context.
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithOverloadRetries sets how many times a request refused as overloaded (503 with code "overloaded": a node
// held it while its storage caught up, then refused it before anything was proposed, so sending it again cannot
// apply it twice) is sent again, each time after the answer's Retry-After (0.25 to 5 s); default
// DefaultOverloadRetries, 0 for none. A retry is made only while the request's timeout leaves it its wait and 2 s
// more (what a node may hold it before answering); otherwise the refusal is returned.
func WithOverloadRetries(n int) Option { return func(c *Client) { c.overloadRetries = n } }

// WithBearerToken sends "Authorization: Bearer <token>" with every request.
func WithBearerToken(token string) Option { return func(c *Client) { c.token = token } }

// New returns a client for the node at addr, e.g. "http://127.0.0.1:7480".
// An address without a scheme is taken as http. A path in addr is kept as a
// prefix, so a node behind a path-routing proxy works.
func New(addr string, opts ...Option) (*Client, error) {
	if addr == "" {
		return nil, errors.New("address is empty")
	}
	raw := addr
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("address %q: %w", addr, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("address %q: scheme must be http or https", addr)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("address %q: no host", addr)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("address %q: must not carry a query, fragment or credentials", addr)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = strings.TrimRight(u.RawPath, "/")

	c := &Client{base: u, hc: http.DefaultClient, timeout: DefaultTimeout, overloadRetries: DefaultOverloadRetries}
	for _, o := range opts {
		o(c)
	}
	if c.hc == nil {
		c.hc = http.DefaultClient
	}
	if c.timeout < 0 {
		return nil, fmt.Errorf("timeout %s is negative", c.timeout)
	}
	if c.overloadRetries < 0 {
		return nil, fmt.Errorf("overload retries %d is negative", c.overloadRetries)
	}
	return c, nil
}

// Addr returns the node address the client talks to.
func (c *Client) Addr() string { return c.base.String() }

// do sends one request. path is already escaped; in, when non-nil, is sent as
// JSON; out, when non-nil, receives the JSON answer. A non-2xx answer becomes
// an *APIError.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	return c.doFor(ctx, "", method, path, query, in, out)
}

// doFor is do for a request about one user, which WithLeaderRouting sends to the user's leader.
func (c *Client) doFor(ctx context.Context, user, method, path string, query url.Values, in, out any) error {
	var body io.ReadSeeker
	ctype := ""
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		body, ctype = bytes.NewReader(b), "application/json"
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	resp, err := c.sendFor(ctx, user, method, path, query, body, ctype)
	for attempt := 0; err != nil && c.overloadRetry(ctx, err, attempt); attempt++ {
		if body != nil {
			if _, serr := body.Seek(0, io.SeekStart); serr != nil {
				return err
			}
		}
		resp, err = c.sendFor(ctx, user, method, path, query, body, ctype)
	}
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		// Drain so the connection can be reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return nil
	}
	if err := httpjson.Read(resp.Body, resp.ContentLength, out); err != nil {
		if ctx.Err() != nil {
			return c.transportError(ctx, c.base, ctx.Err())
		}
		return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
	}
	return nil
}

// overloadRetry reports whether err is a refusal as overloaded that may be sent again (attempt retries were
// made), after waiting for its Retry-After; false when the wait would outlast ctx.
func (c *Client) overloadRetry(ctx context.Context, err error, attempt int) bool {
	var ae *APIError
	if attempt >= c.overloadRetries || !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable ||
		ae.Code != "overloaded" {
		return false
	}
	wait := min(max(time.Duration(ae.RetryAfter)*time.Second, minOverloadWait), maxOverloadWait)
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= wait+overloadRetryMargin {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// send performs a request and returns a 2xx answer, whose body the caller closes; any other answer becomes an
// *APIError.
func (c *Client) send(ctx context.Context, method, path string, query url.Values, body io.Reader, ctype string) (*http.Response, error) {
	resp, _, err := c.sendTo(ctx, c.base, method, path, query, body, ctype)
	return resp, err
}

// sendFor is send for a request about user: to the user's leader when WithLeaderRouting knows it, and to the
// client's address when no connection to the leader was had (nothing sent; body is rewound). Every answer, an
// error too, updates the user's route.
func (c *Client) sendFor(ctx context.Context, user, method, path string, query url.Values, body io.ReadSeeker, ctype string) (*http.Response, error) {
	var in io.Reader
	if body != nil {
		in = body
	}
	if base := c.routes.base(user); base != nil {
		rctx, watch, stop := watchConnect(ctx)
		resp, leader, err := c.sendTo(rctx, base, method, path, query, in, ctype)
		if err == nil || errors.As(err, new(*APIError)) {
			c.routes.learn(user, leader)
			if resp == nil {
				stop()
				return nil, err
			}
			resp.Body = &stopOnClose{ReadCloser: resp.Body, stop: stop}
			return resp, nil
		}
		stop()
		connected := watch.connected.Load()
		c.routes.failed(user, base, connected)
		if connected || ctx.Err() != nil {
			return nil, err
		}
		if body != nil {
			if _, serr := body.Seek(0, io.SeekStart); serr != nil {
				return nil, err
			}
		}
	}
	resp, leader, err := c.sendTo(ctx, c.base, method, path, query, in, ctype)
	if err == nil || errors.As(err, new(*APIError)) {
		c.routes.learn(user, leader)
	}
	return resp, err
}

// stopOnClose ends a routed request's watch once its answer is read.
type stopOnClose struct {
	io.ReadCloser
	stop func()
}

func (b *stopOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.stop()
	return err
}

// sendTo is send to the node at base; it also returns the shard leader the answer named, if any.
func (c *Client) sendTo(ctx context.Context, base *url.URL, method, path string, query url.Values, body io.Reader, ctype string) (*http.Response, string, error) {
	target := base.String() + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, "", fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, "", c.transportError(ctx, base, err)
	}
	leader := resp.Header.Get(apiv1.HeaderShardLeader)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		ae := decodeError(resp.StatusCode, b)
		ae.RetryAfter, _ = strconv.Atoi(resp.Header.Get("Retry-After"))
		return nil, leader, ae
	}
	return resp, leader, nil
}

// transportError shortens the common cases: *url.Error already names the
// method and URL, and our own timeout deserves a message that says so.
func (c *Client) transportError(ctx context.Context, base *url.URL, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && c.timeout > 0 {
		return fmt.Errorf("%s: no answer within %s: %w", base, c.timeout, context.DeadlineExceeded)
	}
	return err
}
