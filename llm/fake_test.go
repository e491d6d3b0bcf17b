package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// reply is one scripted answer of the fake server.
type reply struct {
	status     int           // default 200
	content    string        // the assistant message content of a 200
	body       string        // raw body instead of a chat completion (errors, broken envelopes)
	retryAfter string        // Retry-After header
	delay      time.Duration // answer this late (or when the client gives up)
}

// seen is one request as the fake server received it.
type seen struct {
	auth string
	req  struct {
		Model          string        `json:"model"`
		Messages       []chatMessage `json:"messages"`
		Temperature    *float64      `json:"temperature"`
		MaxTokens      int           `json:"max_tokens"`
		ResponseFormat struct {
			Type string `json:"type"`
		} `json:"response_format"`
	}
}

// fakeOpenAI is a real HTTP server on 127.0.0.1 that speaks OpenAI's chat-completions
// protocol and answers from a script; the last reply repeats.
type fakeOpenAI struct {
	t   *testing.T
	srv *httptest.Server

	mu      sync.Mutex
	replies []reply
	reqs    []seen
}

func newFake(t *testing.T, replies ...reply) *fakeOpenAI {
	f := &fakeOpenAI{t: t, replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeOpenAI) url() string { return f.srv.URL + "/v1" }

func (f *fakeOpenAI) script(replies ...reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.replies = replies
}

func (f *fakeOpenAI) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

func (f *fakeOpenAI) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.reqs...)
}

func (f *fakeOpenAI) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var s seen
	s.auth = r.Header.Get("Authorization")
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s.req); err != nil {
		f.t.Errorf("fake: bad request body: %v", err)
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, s)
	rp := f.replies[min(len(f.reqs), len(f.replies))-1]
	f.mu.Unlock()
	if rp.delay > 0 {
		select {
		case <-time.After(rp.delay):
		case <-r.Context().Done():
			return
		}
	}
	f.write(w, s, rp)
}

func (f *fakeOpenAI) write(w http.ResponseWriter, s seen, rp reply) {
	w.Header().Set("Content-Type", "application/json")
	if rp.retryAfter != "" {
		w.Header().Set("Retry-After", rp.retryAfter)
	}
	if rp.status != 0 {
		w.WriteHeader(rp.status)
	}
	if rp.body != "" {
		_, _ = w.Write([]byte(rp.body))
		return
	}
	resp := map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": 1767225600, "model": s.req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": rp.content}}},
		"usage": map[string]any{"prompt_tokens": 300, "completion_tokens": 40, "total_tokens": 340},
	}
	_ = json.NewEncoder(w).Encode(resp)
}

// errorBody is OpenAI's error shape.
func errorBody(msg string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
	return string(b)
}

// syncBuffer collects log output from concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// rig is an extractor wired to a fake server, a log buffer and its own registry.
type rig struct {
	fake *fakeOpenAI
	ex   *Extractor
	reg  *prometheus.Registry
	logs *syncBuffer
}

func newRig(t *testing.T, copt Options, eopt ExtractorOptions, replies ...reply) *rig {
	t.Helper()
	r := &rig{fake: newFake(t, replies...), reg: prometheus.NewRegistry(), logs: &syncBuffer{}}
	if copt.BaseURL == "" {
		copt.BaseURL = r.fake.url()
	}
	if copt.Model == "" {
		copt.Model = "test-model"
	}
	if copt.MinBackoff == 0 {
		copt.MinBackoff, copt.MaxBackoff = time.Millisecond, 2*time.Second
	}
	c, err := New(copt)
	if err != nil {
		t.Fatal(err)
	}
	eopt.Client, eopt.Registerer = c, r.reg
	eopt.Logger = slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if r.ex, err = NewExtractor(eopt); err != nil {
		t.Fatal(err)
	}
	return r
}

// counter reads a counter from the registry; labels are name=value pairs.
func (r *rig) counter(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := r.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m, labels) {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no counter %s%v", name, labels)
	return 0
}

func hasLabels(m *dto.Metric, labels []string) bool {
	got := map[string]string{}
	for _, lp := range m.GetLabel() {
		got[lp.GetName()] = lp.GetValue()
	}
	for i := 0; i+1 < len(labels); i += 2 {
		if got[labels[i]] != labels[i+1] {
			return false
		}
	}
	return len(got) == len(labels)/2
}

func (r *rig) fallbacks(t *testing.T, reason string) float64 {
	return r.counter(t, "memcluster_llm_extract_fallbacks_total", "reason", reason)
}

func (r *rig) successes(t *testing.T) float64 { return r.counter(t, "memcluster_llm_extract_total") }

// fact renders one fact object of a model answer.
func fact(subj, pred, obj, stmt, pol string, explicit bool) string {
	return fmt.Sprintf(`{"subject":%q,"predicate":%q,"object":%q,"statement":%q,"polarity":%q,"explicit":%t}`,
		subj, pred, obj, stmt, pol, explicit)
}

func answer(facts ...string) string {
	return `{"facts":[` + strings.Join(facts, ",") + `],"rejected":[]}`
}
