package embed

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer speaks the OpenAI embeddings protocol. Each text embeds to
// [len(text), 1, 2] (unnormalised); answers list data in reverse order to
// prove the client orders by index. failures, when set, answers the first
// requests with canned errors.
type fakeServer struct {
	t        *testing.T
	mu       sync.Mutex
	failures []func(w http.ResponseWriter)
	inputs   [][]string
	requests atomic.Int64
	mangle   func(data []map[string]any) []map[string]any
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	if got := r.Header.Get("Authorization"); got != "Bearer sk-test" {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`))
		return
	}
	f.mu.Lock()
	var fail func(http.ResponseWriter)
	if len(f.failures) > 0 {
		fail, f.failures = f.failures[0], f.failures[1:]
	}
	f.mu.Unlock()
	if fail != nil {
		fail(w)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "nomic-embed-text" {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error":{"message":"bad request"}}`))
		return
	}
	f.mu.Lock()
	f.inputs = append(f.inputs, req.Input)
	f.mu.Unlock()
	data := make([]map[string]any, 0, len(req.Input))
	for i := len(req.Input) - 1; i >= 0; i-- {
		data = append(data, map[string]any{"object": "embedding", "index": i,
			"embedding": []float32{float32(len(req.Input[i])), 1, 2}})
	}
	if f.mangle != nil {
		data = f.mangle(data)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
}

func status(code int, body string, header ...string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
		w.Write([]byte(body))
	}
}

func startFake(t *testing.T, opt OpenAIOptions) (*fakeServer, *OpenAI) {
	t.Helper()
	f := &fakeServer{t: t}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	opt.BaseURL = srv.URL + "/v1/"
	opt.Model = "nomic-embed-text"
	if opt.APIKey == "" {
		opt.APIKey = "sk-test"
	}
	opt.MinBackoff = time.Millisecond
	c, err := NewOpenAI(opt)
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func TestOpenAIBatchesOrdersAndNormalises(t *testing.T) {
	f, c := startFake(t, OpenAIOptions{BatchSize: 2})
	if c.Dim() != 0 {
		t.Fatalf("dim before first answer = %d, want 0", c.Dim())
	}
	texts := []string{"a", "bb", "", "dddd", "eeeee"}
	v, err := c.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if c.Dim() != 3 {
		t.Errorf("learned dim %d, want 3", c.Dim())
	}
	for i, s := range texts {
		if s == "" {
			if l2(v[i]) != 0 || len(v[i]) != 3 {
				t.Errorf("empty text: %v, want zero vector", v[i])
			}
			continue
		}
		n := float32(len(s))
		norm := float32(math.Sqrt(float64(n*n + 5)))
		if math.Abs(float64(v[i][0]-n/norm)) > 1e-6 || math.Abs(float64(v[i][2]-2/norm)) > 1e-6 {
			t.Errorf("text %q: %v", s, v[i])
		}
	}
	want := [][]string{{"a", "bb"}, {"dddd", "eeeee"}}
	if got, _ := json.Marshal(f.inputs); string(got) != mustJSON(want) {
		t.Errorf("requests %s, want %s (empty text must not be sent)", got, mustJSON(want))
	}
	if strings.Contains(c.Fingerprint(), "sk-test") || c.Fingerprint() != "openai/nomic-embed-text/"+strings.TrimSuffix(c.opt.BaseURL, "/") {
		t.Errorf("fingerprint %q", c.Fingerprint())
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestOpenAIRetries429HonouringRetryAfter(t *testing.T) {
	f, c := startFake(t, OpenAIOptions{MaxBackoff: 150 * time.Millisecond})
	f.failures = []func(http.ResponseWriter){
		status(429, `{"error":{"message":"Rate limit reached"}}`, "Retry-After", "1"),
		status(503, `upstream down`),
	}
	start := time.Now()
	v, err := c.Embed(context.Background(), []string{"hello"})
	if err != nil {
		t.Fatal(err)
	}
	// Retry-After: 1 is honoured but capped at MaxBackoff.
	if el := time.Since(start); el < 150*time.Millisecond || el > 900*time.Millisecond {
		t.Errorf("elapsed %v, want about 150ms", el)
	}
	if len(v) != 1 || f.requests.Load() != 3 {
		t.Errorf("requests %d, want 3", f.requests.Load())
	}
}

func TestOpenAIGivesUpAfterMaxRetries(t *testing.T) {
	f, c := startFake(t, OpenAIOptions{MaxRetries: 2})
	for range 5 {
		f.failures = append(f.failures, status(500, `{"object":"error","message":"CUDA out of memory","code":500}`))
	}
	_, err := c.Embed(context.Background(), []string{"hello"})
	var se *StatusError
	if !errors.As(err, &se) || !errors.Is(err, ErrHTTPStatus) || se.Code != 500 {
		t.Fatalf("err = %v, want a 500 StatusError", err)
	}
	for _, want := range []string{"after 3 attempts", "500 Internal Server Error", "CUDA out of memory"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if f.requests.Load() != 3 {
		t.Errorf("requests %d, want 3", f.requests.Load())
	}
}

func TestOpenAIClientErrorsAreNotRetried(t *testing.T) {
	for name, tc := range map[string]struct{ body, want string }{
		"openai": {`{"error":{"message":"model \"x\" not found, try pulling it first"}}`, `model "x" not found`},
		"tei":    {`{"error":"Input validation error: inputs cannot be empty","error_type":"Validation"}`, "inputs cannot be empty"},
		"plain":  {"bad things", "bad things"},
	} {
		t.Run(name, func(t *testing.T) {
			f, c := startFake(t, OpenAIOptions{})
			f.failures = []func(http.ResponseWriter){status(400, tc.body)}
			_, err := c.Embed(context.Background(), []string{"hello"})
			if !errors.Is(err, ErrHTTPStatus) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "400") {
				t.Errorf("err = %v, want 400 with %q", err, tc.want)
			}
			if f.requests.Load() != 1 {
				t.Errorf("requests %d, want 1", f.requests.Load())
			}
		})
	}
}

func TestOpenAIUnauthorised(t *testing.T) {
	_, c := startFake(t, OpenAIOptions{APIKey: "wrong"})
	_, err := c.Embed(context.Background(), []string{"hello"})
	if !errors.Is(err, ErrHTTPStatus) || !strings.Contains(err.Error(), "401 Unauthorized: Incorrect API key") {
		t.Errorf("err = %v", err)
	}
}

func TestOpenAIBadResponses(t *testing.T) {
	for name, tc := range map[string]struct {
		dim    int
		mangle func([]map[string]any) []map[string]any
		want   string
	}{
		"count":  {0, func(d []map[string]any) []map[string]any { return d[1:] }, "1 embeddings for 2 inputs"},
		"index":  {0, func(d []map[string]any) []map[string]any { d[0]["index"] = 0; return d }, "repeated index"},
		"dim":    {4, nil, "dimension 3, want 4"},
		"base64": {0, func(d []map[string]any) []map[string]any { d[0]["embedding"] = "AAAA"; return d }, "cannot unmarshal"},
	} {
		t.Run(name, func(t *testing.T) {
			f, c := startFake(t, OpenAIOptions{Dim: tc.dim})
			f.mangle = tc.mangle
			_, err := c.Embed(context.Background(), []string{"a", "b"})
			if !errors.Is(err, ErrBadResponse) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrBadResponse with %q", err, tc.want)
			}
			if f.requests.Load() != 1 {
				t.Errorf("bad answers must not be retried: %d requests", f.requests.Load())
			}
		})
	}
}

func TestOpenAIContext(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-block:
		}
	}))
	t.Cleanup(func() { close(block); srv.Close() })
	c, err := NewOpenAI(OpenAIOptions{BaseURL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.Embed(ctx, []string{"hello"})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Errorf("err = %v after %v, want a prompt deadline error", err, time.Since(start))
	}
}

func TestOpenAIEmptyOnlyBeforeDimKnown(t *testing.T) {
	_, c := startFake(t, OpenAIOptions{})
	if _, err := c.Embed(context.Background(), []string{""}); !errors.Is(err, ErrDimUnknown) {
		t.Errorf("err = %v, want ErrDimUnknown", err)
	}
	_, c = startFake(t, OpenAIOptions{Dim: 3})
	if v, err := c.Embed(context.Background(), []string{""}); err != nil || len(v[0]) != 3 {
		t.Errorf("configured dim: %v, %v", v, err)
	}
}

func TestOpenAIOptionsValidate(t *testing.T) {
	for name, o := range map[string]OpenAIOptions{
		"no url":   {Model: "m"},
		"bad url":  {BaseURL: "localhost:11434", Model: "m"},
		"no model": {BaseURL: "http://x"},
		"dim":      {BaseURL: "http://x", Model: "m", Dim: -1},
		"batch":    {BaseURL: "http://x", Model: "m", BatchSize: -1},
	} {
		if err := o.Validate(); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s: err = %v, want ErrInvalidOptions", name, err)
		}
	}
}
