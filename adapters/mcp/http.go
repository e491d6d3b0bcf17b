package mcp

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memcluster/memcluster/client"
)

// HTTPOptions configures NewHTTPHandler.
type HTTPOptions struct {
	// API is the node's own /v1 handler: tool calls go through it in process, with the caller's token. Required.
	API http.Handler
	// Version is the server version reported to clients. Default "dev".
	Version string
	// MaxBodyBytes bounds one MCP request body. Default: the SDK's (4 MiB).
	MaxBodyBytes int64
	// Logger receives the SDK's transport log. Default: none.
	Logger *slog.Logger
}

// NewHTTPHandler serves MCP over Streamable HTTP. It is stateless: every POST carries a whole exchange and no
// session lives on the node, so any node of a cluster answers any request, and a client on the 2026 revision
// (which drops sessions) negotiates that revision instead of being refused after a discovery it misread
// (DESIGN.md). Each tool call runs through API with the Authorization header of the HTTP request that carried
// it, so an MCP caller can never do more than its token may.
func NewHTTPHandler(o HTTPOptions) (http.Handler, error) {
	if o.API == nil {
		return nil, fmt.Errorf("%w: API is required", ErrOptions)
	}
	s, err := New(Options{Client: InProcessClient(o.API), Version: o.Version})
	if err != nil {
		return nil, err
	}
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, MaxRequestBodyBytes: o.MaxBodyBytes,
			Logger: o.Logger}), nil
}

// InProcessClient returns a ClientFunc whose clients send their requests straight to api (no socket),
// carrying the bearer token of the MCP request.
func InProcessClient(api http.Handler) ClientFunc {
	hc := &http.Client{Transport: handlerTransport{api}}
	return func(h http.Header) (*client.Client, error) {
		opts := []client.Option{client.WithHTTPClient(hc)}
		if tok, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer "); ok {
			opts = append(opts, client.WithBearerToken(strings.TrimSpace(tok)))
		}
		return client.New("http://memnode", opts...)
	}
}

// handlerTransport is an http.RoundTripper that serves each request with an http.Handler in process.
type handlerTransport struct{ h http.Handler }

// The request is made to look like one a server received (a body that is never nil, a remote address for the
// audit log), and a panic in the handler fails this request only, as net/http's server would.
func (t handlerTransport) RoundTrip(r *http.Request) (resp *http.Response, err error) {
	r = r.Clone(r.Context())
	if r.Body == nil {
		r.Body = http.NoBody
	}
	r.RemoteAddr = "mcp"
	r.RequestURI = r.URL.RequestURI()
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, fmt.Errorf("%s %s: handler panic: %v", r.Method, r.URL.Path, p)
		}
	}()
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}
