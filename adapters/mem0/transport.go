package mem0

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/memcluster/memcluster/client"
)

// handlerTransport is an http.RoundTripper that serves each request with the node's own API handler: the
// adapter's calls go through exactly the decoding, authorization, rate limits and metrics of any /v1 call,
// without a socket.
type handlerTransport struct {
	h      http.Handler
	remote string // the caller's address, for the API's audit log
}

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	if r.Body == nil {
		r.Body = http.NoBody
	}
	r.RequestURI = r.URL.RequestURI()
	r.RemoteAddr = t.remote
	t.h.ServeHTTP(rec, r)
	return &http.Response{Status: http.StatusText(rec.status), StatusCode: rec.status, Header: rec.header,
		Body: readCloser{bytes.NewReader(rec.body.Bytes())}, ContentLength: int64(rec.body.Len()),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: r}, nil
}

// recorder buffers one answer of the API handler.
type recorder struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// apiKey is the caller's credential as mem0's clients send it: "Authorization: Token <key>" (the platform
// client), "Authorization: Bearer <key>", or "X-API-Key: <key>" (the self-hosted server). It becomes the
// memcluster bearer token of every /v1 call made for the request.
func apiKey(r *http.Request) string {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	for _, scheme := range []string{"Token ", "Bearer "} {
		if len(h) > len(scheme) && strings.EqualFold(h[:len(scheme)], scheme) {
			return strings.TrimSpace(h[len(scheme):])
		}
	}
	return strings.TrimSpace(r.Header.Get("X-API-Key"))
}

// clientFor is a /v1 client acting with the caller's credential and nothing else.
func (a *Adapter) clientFor(r *http.Request) (*client.Client, error) {
	opts := []client.Option{client.WithHTTPClient(&http.Client{Transport: handlerTransport{h: a.opts.API, remote: r.RemoteAddr}}),
		client.WithTimeout(a.opts.Timeout)}
	if key := apiKey(r); key != "" {
		opts = append(opts, client.WithBearerToken(key))
	}
	return client.New("http://memnode.internal", opts...)
}
