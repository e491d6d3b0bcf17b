package main

import (
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memcluster/memcluster/consolidation"
	"github.com/memcluster/memcluster/llm"
	"github.com/memcluster/memcluster/server"
)

// llmMaxTokens bounds an extraction answer: 20 facts fit with room to spare, and a model
// that rambles past it is cut off (and falls back) instead of billing on.
const llmMaxTokens = 2048

// newExtractor builds the LLM fact extractor from the --llm-* flags; nil (the rules
// extract) when --llm-url is empty. The API key is read from the variable --llm-api-key-env
// names; an unset variable sends no key (Ollama and most local servers want none).
func newExtractor(c config, getenv func(string) string, log *slog.Logger, reg prometheus.Registerer) (consolidation.ExtractFunc, error) {
	if c.llmURL == "" {
		return nil, nil
	}
	switch {
	case c.llmModel == "":
		return nil, fmt.Errorf("--llm-model: required with --llm-url")
	case c.llmTimeout <= 0:
		return nil, fmt.Errorf("--llm-timeout: %s is not positive", c.llmTimeout)
	}
	var key string
	if c.llmAPIKeyEnv != "" {
		key = getenv(c.llmAPIKeyEnv)
	}
	client, err := llm.New(llm.Options{BaseURL: c.llmURL, APIKey: key, Model: c.llmModel,
		Timeout: c.llmTimeout, MaxTokens: llmMaxTokens})
	if err != nil {
		return nil, fmt.Errorf("--llm-url: %w", err)
	}
	ex, err := llm.NewExtractor(llm.ExtractorOptions{Client: client, Timeout: c.llmTimeout, Logger: log, Registerer: reg})
	if err != nil {
		return nil, fmt.Errorf("llm extractor: %w", err)
	}
	log.Info("LLM fact extraction on; the rules answer when it fails", "provider", client.String(),
		"api_key_env", c.llmAPIKeyEnv, "api_key_set", key != "")
	return ex.Func(), nil
}

// newReranker builds the reranker from the --rerank-* flags; nil (searches keep the pipeline's order) when
// --rerank-url is empty.
func newReranker(c config, getenv func(string) string, log *slog.Logger, reg prometheus.Registerer) (server.Reranker, error) {
	if c.rerankURL == "" {
		return nil, nil
	}
	switch {
	case c.rerankTO <= 0:
		return nil, fmt.Errorf("--rerank-timeout: %s is not positive", c.rerankTO)
	case c.rerankTop < 2 || c.rerankTop > 1000:
		return nil, fmt.Errorf("--rerank-candidates: want 2..1000, got %d", c.rerankTop)
	}
	var key string
	if c.rerankKeyEnv != "" {
		key = getenv(c.rerankKeyEnv)
	}
	rr, err := llm.NewReranker(llm.RerankerOptions{URL: c.rerankURL, Model: c.rerankModel, APIKey: key,
		Timeout: c.rerankTO, Logger: log, Registerer: reg})
	if err != nil {
		return nil, fmt.Errorf("--rerank-url: %w", err)
	}
	log.Info("reranking on; a search keeps its own order when it fails", "provider", rr.String(),
		"candidates", c.rerankTop, "api_key_set", key != "")
	return rr, nil
}
