package llm

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// fakeRerank is a real HTTP server on 127.0.0.1 that speaks TEI's POST /rerank and the Cohere/Jina
// POST /v1/rerank. It scores a text by how many times it holds the query's last word, unless answer
// replaces the body, or hang holds the answer until the client gives up.
type fakeRerank struct {
	srv    *httptest.Server
	answer atomic.Value // string: a raw body instead of the scores
	hang   atomic.Bool
	status atomic.Int32
	calls  atomic.Int32
	model  atomic.Value // string: the model of the last Cohere request
}

func newFakeRerank(t *testing.T) *fakeRerank {
	f := &fakeRerank{}
	f.answer.Store("")
	f.model.Store("")
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeRerank) serve(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	var req struct {
		Model     string   `json:"model"`
		Query     string   `json:"query"`
		Texts     []string `json:"texts"`
		Documents []string `json:"documents"`
	}
	cohere := r.URL.Path == "/v1/rerank"
	if r.Method != http.MethodPost || (!cohere && r.URL.Path != "/rerank") || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
		return
	}
	if f.hang.Load() {
		<-r.Context().Done()
		return
	}
	if s := f.status.Load(); s != 0 {
		http.Error(w, `{"error":"overloaded"}`, int(s))
		return
	}
	if a := f.answer.Load().(string); a != "" {
		_, _ = w.Write([]byte(a))
		return
	}
	words := strings.Fields(strings.ToLower(req.Query))
	last := strings.Trim(words[len(words)-1], "?")
	texts, key := req.Texts, "score"
	if cohere {
		texts, key = req.Documents, "relevance_score"
		f.model.Store(req.Model)
	}
	hits := []map[string]any{}
	for i := len(texts) - 1; i >= 0; i-- { // any order: the index says which text
		hits = append(hits, map[string]any{"index": i, key: float64(strings.Count(strings.ToLower(texts[i]), last))})
	}
	if cohere {
		_ = json.NewEncoder(w).Encode(map[string]any{"results": hits})
		return
	}
	_ = json.NewEncoder(w).Encode(hits)
}

func newTestReranker(t *testing.T, opt RerankerOptions) (*Reranker, *prometheus.Registry, *syncBuffer) {
	t.Helper()
	reg, logs := prometheus.NewRegistry(), &syncBuffer{}
	opt.Registerer, opt.Logger = reg, slog.New(slog.NewTextHandler(logs, nil))
	r, err := NewReranker(opt)
	if err != nil {
		t.Fatal(err)
	}
	return r, reg, logs
}

var rerankTexts = []string{"a red kite", "tandem tandem bike", "one tandem"}

func TestRerankBothProtocols(t *testing.T) {
	f := newFakeRerank(t)
	for _, path := range []string{"/rerank", "/v1/rerank"} {
		r, reg, _ := newTestReranker(t, RerankerOptions{URL: f.srv.URL + path, Model: "bge-reranker"})
		got, ok := r.Scores(t.Context(), "which tandem", rerankTexts)
		if !ok || !slices.Equal(got, []float64{0, 2, 1}) {
			t.Fatalf("%s: scores %v %v, want [0 2 1]", path, got, ok)
		}
		if n := (&rig{reg: reg}).counter(t, "memcluster_rerank_total"); n != 1 {
			t.Fatalf("%s: rerank_total %v", path, n)
		}
	}
	if m := f.model.Load().(string); m != "bge-reranker" {
		t.Fatalf("Cohere request model %q", m)
	}
}

// Every way the endpoint can fail leaves the caller's order (nil, false), counted by reason and logged.
func TestRerankFallsBack(t *testing.T) {
	cases := []struct {
		name, answer, reason string
		status               int
		hang                 bool
	}{
		{"not json", "scores: 1, 2", reasonBadResponse, 0, false},
		{"missing text", `[{"index":0,"score":1},{"index":1,"score":2}]`, reasonBadResponse, 0, false},
		{"repeated index", `[{"index":0,"score":1},{"index":0,"score":2},{"index":2,"score":3}]`, reasonBadResponse, 0, false},
		{"out of range", `[{"index":0,"score":1},{"index":1,"score":2},{"index":7,"score":3}]`, reasonBadResponse, 0, false},
		{"no score", `[{"index":0},{"index":1,"score":2},{"index":2,"score":3}]`, reasonBadResponse, 0, false},
		{"http 503", "", reasonHTTP, http.StatusServiceUnavailable, false},
		{"timeout", "", reasonTimeout, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeRerank(t)
			f.answer.Store(tc.answer)
			f.status.Store(int32(tc.status))
			f.hang.Store(tc.hang)
			r, reg, logs := newTestReranker(t, RerankerOptions{URL: f.srv.URL + "/rerank", Timeout: 100 * time.Millisecond})
			if got, ok := r.Scores(t.Context(), "which tandem", rerankTexts); ok || got != nil {
				t.Fatalf("scores %v %v, want a fallback", got, ok)
			}
			rg := &rig{reg: reg}
			if n := rg.counter(t, "memcluster_rerank_fallbacks_total", "reason", tc.reason); n != 1 {
				t.Fatalf("fallbacks{%s} = %v\n%s", tc.reason, n, logs)
			}
			if !strings.Contains(logs.String(), "reason="+tc.reason) {
				t.Fatalf("no warning with reason=%s:\n%s", tc.reason, logs)
			}
		})
	}
}

func TestRerankTransportErrorAndBreaker(t *testing.T) {
	f := newFakeRerank(t)
	url := f.srv.URL + "/rerank"
	f.srv.Close() // nothing listens there any more
	r, reg, logs := newTestReranker(t, RerankerOptions{URL: url, BreakerFailures: 2, BreakerCooldown: time.Hour})
	for range 3 {
		if _, ok := r.Scores(t.Context(), "q", rerankTexts); ok {
			t.Fatal("a dead endpoint answered")
		}
	}
	rg := &rig{reg: reg}
	if tr, br := rg.counter(t, "memcluster_rerank_fallbacks_total", "reason", reasonTransport),
		rg.counter(t, "memcluster_rerank_fallbacks_total", "reason", reasonBreaker); tr != 2 || br != 1 {
		t.Fatalf("transport %v, breaker %v; want 2 and 1", tr, br)
	}
	if !strings.Contains(logs.String(), "keeps failing") {
		t.Fatalf("no warning that calls are paused:\n%s", logs)
	}
}

func TestRerankOptionsValidate(t *testing.T) {
	for _, u := range []string{"", "ftp://x/rerank", "http://localhost:8080/v1/embeddings", "http://localhost:8080"} {
		if _, err := NewReranker(RerankerOptions{URL: u}); err == nil {
			t.Errorf("URL %q accepted", u)
		}
	}
	if _, err := NewReranker(RerankerOptions{URL: "http://localhost:8080/rerank", Timeout: -time.Second}); err == nil {
		t.Error("negative timeout accepted")
	}
}
