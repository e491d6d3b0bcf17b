package server

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/memcluster/memcluster/adapters/mem0"
	"github.com/memcluster/memcluster/client"
)

var update = flag.Bool("update", false, "rewrite docs/openapi.json from the route table")

// documented starts a real node with the mem0 adapter described, as memnode wires it, and returns its
// document.
func documented(t *testing.T) (*testNode, *openapi3.T) {
	t.Helper()
	n := startTestNode(t, Options{Auth: testAuth(t)})
	m0, err := mem0.New(mem0.Options{API: n.api})
	if err != nil {
		t.Fatal(err)
	}
	n.api.Describe(func(doc *openapi3.T) { m0.Describe(doc, "/mem0") })
	// The document as served, loaded back: what a client of /v1/openapi.json gets.
	w := serve(n.api, "GET", "/v1/openapi.json", "", "")
	doc, err := openapi3.NewLoader().LoadFromData(w.Body.Bytes())
	if err != nil {
		t.Fatalf("GET /v1/openapi.json: %d: %v", w.Code, err)
	}
	return n, doc
}

// TestOpenAPIDescribesEveryRoute walks the patterns the node's mux registered (not a list kept by hand): a
// route added without its answer in responses, or otherwise missing from the document, fails here.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	n, doc := documented(t)
	if err := doc.Validate(context.Background()); err != nil {
		t.Errorf("the document does not validate: %v", err)
	}
	for _, e := range n.api.Routes() {
		if _, ok := responses[e.Name]; !ok && e.Body != bodyStream { // streams: streamOp describes them
			t.Errorf("route %s (%s %s) has no answer type in responses (openapi.go)", e.Name, e.Method, e.Path)
		}
	}
	for _, p := range n.api.Patterns() {
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			if !strings.HasPrefix(p, "/internal/") && !strings.HasPrefix(p, "/debug/pprof/") {
				t.Errorf("pattern %q has no method: describe it or say why it is left out", p)
			}
			continue // node-to-node calls and profiles are not the public API
		}
		item := doc.Paths.Value(path)
		if item == nil || item.GetOperation(method) == nil {
			t.Errorf("%s %s is served but not in the OpenAPI document", method, path)
		}
	}
	if doc.Paths.Value("/mem0/v3/memories/search/") == nil {
		t.Errorf("the mem0 adapter's paths are missing")
	}
}

// TestOpenAPIExamples sends each route's example request (routeCases) to a real node and validates the
// request and its answer against the document.
func TestOpenAPIExamples(t *testing.T) {
	n, doc := documented(t)
	doc.Servers = openapi3.Servers{{URL: "http://node.test"}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	if w := serve(n.api, "POST", "/v1/memories", tokBobWriter, `{"user_id":"bob","text":"tea with lemon"}`); w.Code != 201 {
		t.Fatalf("seed: %d %s", w.Code, w.Body)
	}
	for _, e := range n.api.Routes() {
		path, body := routeCases[e.Name].req("bob")
		req := httptest.NewRequest(e.Method, "http://node.test"+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
			if e.Body == bodyStream {
				req.Header.Set("Content-Type", "application/octet-stream")
			}
		}
		req.Header.Set("Authorization", "Bearer "+tokAdmin)
		route, params, err := router.FindRoute(req)
		if err != nil {
			t.Errorf("%s: %s %s: %v", e.Name, e.Method, path, err)
			continue
		}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			t.Errorf("%s: request: %v", e.Name, err)
		}
		req.Body = io.NopCloser(strings.NewReader(body))
		w := httptest.NewRecorder()
		n.api.ServeHTTP(w, req)
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: w.Code, Header: w.Header(),
			Body: io.NopCloser(bytes.NewReader(w.Body.Bytes()))}
		if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
			t.Errorf("%s: answer %d: %v", e.Name, w.Code, err)
		}
	}
}

// TestOpenAPIFile: docs/openapi.json is the served document (rewrite it with -update).
func TestOpenAPIFile(t *testing.T) {
	n, _ := documented(t)
	w := serve(n.api, "GET", "/v1/openapi.json", "", "")
	if w.Code != http.StatusOK || !json.Valid(w.Body.Bytes()) {
		t.Fatalf("GET /v1/openapi.json: %d", w.Code)
	}
	served := append(w.Body.Bytes(), '\n')
	if *update {
		if err := os.WriteFile("../docs/openapi.json", served, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file, err := os.ReadFile("../docs/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(n.api)
	defer srv.Close()
	cl, err := client.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := cl.OpenAPI(context.Background()); err != nil || !bytes.Equal(append(got, '\n'), served) {
		t.Errorf("client.OpenAPI: %v (%d bytes, served %d)", err, len(got), len(served))
	}
	if !bytes.Equal(file, served) {
		t.Fatalf("docs/openapi.json differs from the served document: go test ./server -run TestOpenAPIFile -update")
	}
}
