package main

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

// The --rerank-* flags: empty URL means no reranker; bad values are one error naming the flag.
func TestNewRerankerFlags(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	env := func(string) string { return "" }
	if rr, err := newReranker(config{}, env, log, nil); rr != nil || err != nil {
		t.Fatalf("no URL: %v %v, want nil, nil", rr, err)
	}
	ok := config{rerankURL: "http://127.0.0.1:8080/rerank", rerankTO: time.Second, rerankTop: 30}
	if rr, err := newReranker(ok, env, log, nil); rr == nil || err != nil {
		t.Fatalf("TEI URL: %v %v", rr, err)
	}
	for flag, c := range map[string]config{
		"--rerank-timeout":    {rerankURL: ok.rerankURL, rerankTop: 30},
		"--rerank-candidates": {rerankURL: ok.rerankURL, rerankTO: time.Second, rerankTop: 1},
		"--rerank-url":        {rerankURL: "http://127.0.0.1:8080/v1/embeddings", rerankTO: time.Second, rerankTop: 30},
	} {
		if _, err := newReranker(c, env, log, nil); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%s: error %v, want one naming it", flag, err)
		}
	}
}
