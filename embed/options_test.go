package embed

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestOptionsValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		opt  Options
		want string
	}{
		"provider":        {Options{Provider: "bert"}, `provider "bert"`},
		"hashed url":      {Options{URL: "http://x"}, `url is set but provider is "hashed"`},
		"hashed key":      {Options{APIKey: "k"}, "api key"},
		"hashed timeout":  {Options{Timeout: time.Second}, "openai tuning"},
		"hashed two dims": {Options{Hashed: HashedOptions{Dim: 8}}, "use Dim"},
		"neg dim":         {Options{Dim: -3}, "negative"},
		"openai no url":   {Options{Provider: "openai", Model: "m"}, "base URL is required"},
		"openai no model": {Options{Provider: "openai", URL: "http://x"}, "model is required"},
		"openai dir":      {Options{Provider: "openai", URL: "http://x", Model: "m", Dir: "/m"}, "dir is set"},
		"m2v no dir":      {Options{Provider: "model2vec"}, "dir is required"},
		"m2v url":         {Options{Provider: "model2vec", Dir: "/m", URL: "http://x"}, "url is set"},
	} {
		err := tc.opt.Validate()
		if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
		if _, err2 := New(tc.opt); err2 == nil {
			t.Errorf("%s: New accepted invalid options", name)
		}
	}
}

func TestNewProviders(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.(*Cached); !ok || e.Dim() != 256 || !strings.HasPrefix(e.Fingerprint(), "hashed-v1/d256/") {
		t.Errorf("default: %T dim %d %q", e, e.Dim(), e.Fingerprint())
	}
	e, _ = New(Options{Dim: 64, CacheSize: -1})
	if _, ok := e.(*Hashed); !ok || e.Dim() != 64 {
		t.Errorf("uncached: %T dim %d", e, e.Dim())
	}

	dir := tinyModel(t, "F32", "embeddings")
	e, err = New(Options{Provider: "model2vec", Dir: dir})
	if err != nil || e.Dim() != tinyDim {
		t.Fatalf("model2vec: %v", err)
	}
	if _, err := New(Options{Provider: "model2vec", Dir: dir, Dim: 256}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("model2vec dim mismatch: %v", err)
	}

	_, client := startFake(t, OpenAIOptions{})
	e, err = New(Options{Provider: "openai", URL: client.opt.BaseURL, Model: "nomic-embed-text", APIKey: "sk-test", BatchSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.Embed(context.Background(), []string{"hello", "hello"})
	if err != nil || len(v) != 2 || e.Dim() != 3 || e.(*Cached).Stats().Misses != 1 {
		t.Errorf("openai via New: %v %v dim %d", v, err, e.Dim())
	}
}
