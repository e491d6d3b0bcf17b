package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/llm"
)

// teiRerank is a TEI rerank server on a socket: POST /rerank {query, texts} → [{index, score}], scoring 1 a
// text that mentions a kite; broken answers 500 instead.
func teiRerank(t *testing.T, broken *atomic.Bool) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Query string   `json:"query"`
			Texts []string `json:"texts"`
		}
		if r.URL.Path != "/rerank" || json.NewDecoder(r.Body).Decode(&req) != nil || broken.Load() {
			http.Error(w, `{"error":"no"}`, http.StatusInternalServerError)
			return
		}
		out := []map[string]any{}
		for i, s := range req.Texts {
			score := 0.0
			if strings.Contains(s, "kite") {
				score = 1
			}
			out = append(out, map[string]any{"index": i, "score": score})
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/rerank"
}

// TestSearchRerank: with a reranker the default mode's results come in its order with its scores; when it
// fails they come in the pipeline's order, without them.
func TestSearchRerank(t *testing.T) {
	var broken atomic.Bool
	rr, err := llm.NewReranker(llm.RerankerOptions{URL: teiRerank(t, &broken), BreakerFailures: -1})
	if err != nil {
		t.Fatal(err)
	}
	n := startTestNode(t, Options{Auth: testAuth(t), Rerank: rr})
	for _, text := range []string{"I ride a green tandem", "the tandem tandem club meets on Sundays", "I flew a red kite"} {
		if w := serve(n.api, "POST", "/v1/memories", tokBobWriter, `{"user_id":"bob","text":"`+text+`"}`); w.Code != http.StatusCreated {
			t.Fatalf("put: %d %s", w.Code, w.Body)
		}
	}
	search := func() []apiv1.SearchResult {
		w := serve(n.api, "POST", "/v1/search", tokBobReader, `{"user_id":"bob","query":"tandem","min_score":0,"k":2}`)
		var sr apiv1.SearchResponse
		if err := json.Unmarshal(w.Body.Bytes(), &sr); err != nil || w.Code != http.StatusOK {
			t.Fatalf("search: %d %s", w.Code, w.Body)
		}
		return sr.Results
	}
	got := search()
	if len(got) != 2 || !strings.Contains(got[0].Text, "kite") || got[0].RerankScore == nil || *got[0].RerankScore != 1 ||
		got[0].Plan == nil {
		t.Fatalf("reranked: %+v, want the kite first with rerank score 1 and the plan", got)
	}
	broken.Store(true)
	got = search()
	if len(got) != 2 || strings.Contains(got[0].Text, "kite") || got[0].RerankScore != nil {
		t.Fatalf("rerank failing: %+v, want the pipeline's order without rerank scores", got)
	}
}
