package embed

import (
	"fmt"
	"time"
)

// Providers accepted by Options.Provider.
const (
	ProviderHashed    = "hashed"
	ProviderOpenAI    = "openai"
	ProviderModel2Vec = "model2vec"
)

// Options selects and configures an embedder for New. Fields that do not
// apply to the chosen provider must be left zero: a stray URL with the hashed
// provider is almost always a forgotten MEMNODE_EMBED_PROVIDER.
type Options struct {
	// Provider is "hashed" (default), "openai" or "model2vec". Env: MEMNODE_EMBED_PROVIDER.
	Provider string
	// URL is the OpenAI-compatible base URL, e.g. http://localhost:11434/v1; openai only, required. Env: MEMNODE_EMBED_URL.
	URL string
	// Model is the remote model name; openai only, required. Env: MEMNODE_EMBED_MODEL.
	Model string
	// APIKey is sent as a bearer token; openai only, optional. Env: MEMNODE_EMBED_API_KEY.
	APIKey string
	// Dir holds model.safetensors, tokenizer.json and config.json; model2vec only, required. Env: MEMNODE_EMBED_DIR.
	Dir string
	// Dim is the vector length. hashed: default 256. openai: expected length,
	// 0 learns it from the first answer. model2vec: 0, or the model's length
	// as a check. Env: MEMNODE_EMBED_DIM.
	Dim int
	// CacheSize is the LRU size in vectors; default 10000 (about 10 MiB at
	// 256 dims); negative disables the cache. No env var yet.
	CacheSize int

	// Hashed tunes the hashed provider; its Dim must be 0 (use Dim above). No env vars.
	Hashed HashedOptions
	// Timeout, BatchSize and MaxRetries tune the openai provider; see
	// OpenAIOptions for defaults. No env vars.
	Timeout    time.Duration
	BatchSize  int
	MaxRetries int
}

func (o Options) withDefaults() Options {
	if o.Provider == "" {
		o.Provider = ProviderHashed
	}
	if o.CacheSize == 0 {
		o.CacheSize = DefaultCacheSize
	}
	return o
}

// Validate checks the fields against each other; provider-specific checks
// (URL syntax, hashed ranges) run too.
func (o Options) Validate() error {
	o = o.withDefaults()
	if o.Dim < 0 {
		return fmt.Errorf("%w: embed dim %d is negative", ErrInvalidOptions, o.Dim)
	}
	openaiTuned := o.Timeout != 0 || o.BatchSize != 0 || o.MaxRetries != 0
	set := func(name string, v bool) error {
		if v {
			return fmt.Errorf("%w: embed %s is set but provider is %q", ErrInvalidOptions, name, o.Provider)
		}
		return nil
	}
	switch o.Provider {
	case ProviderHashed:
		return firstErr(set("url", o.URL != ""), set("model", o.Model != ""), set("api key", o.APIKey != ""),
			set("dir", o.Dir != ""), set("openai tuning", openaiTuned), set("hashed dim (use Dim)", o.Hashed.Dim != 0),
			o.hashedOptions().Validate())
	case ProviderOpenAI:
		return firstErr(set("dir", o.Dir != ""), set("hashed options", o.Hashed != HashedOptions{}), o.openAIOptions().Validate())
	case ProviderModel2Vec:
		if o.Dir == "" {
			return fmt.Errorf("%w: embed dir is required for provider model2vec", ErrInvalidOptions)
		}
		return firstErr(set("url", o.URL != ""), set("model", o.Model != ""), set("api key", o.APIKey != ""),
			set("openai tuning", openaiTuned), set("hashed options", o.Hashed != HashedOptions{}))
	}
	return fmt.Errorf("%w: embed provider %q (want hashed, openai or model2vec)", ErrInvalidOptions, o.Provider)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (o Options) hashedOptions() HashedOptions {
	h := o.Hashed
	h.Dim = o.Dim
	return h
}

func (o Options) openAIOptions() OpenAIOptions {
	return OpenAIOptions{BaseURL: o.URL, APIKey: o.APIKey, Model: o.Model, Dim: o.Dim,
		Timeout: o.Timeout, BatchSize: o.BatchSize, MaxRetries: o.MaxRetries}
}

// New builds the configured embedder, wrapped in a *Cached unless CacheSize < 0.
func New(opt Options) (Embedder, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt = opt.withDefaults()
	inner, err := newProvider(opt)
	if err != nil {
		return nil, err
	}
	if opt.CacheSize < 0 {
		return inner, nil
	}
	return NewCached(inner, opt.CacheSize), nil
}

func newProvider(opt Options) (Embedder, error) {
	switch opt.Provider {
	case ProviderOpenAI:
		return NewOpenAI(opt.openAIOptions())
	case ProviderModel2Vec:
		m, err := LoadModel2Vec(opt.Dir)
		if err != nil {
			return nil, err
		}
		if opt.Dim != 0 && opt.Dim != m.Dim() {
			return nil, fmt.Errorf("%w: embed dim %d but model in %s has %d", ErrInvalidOptions, opt.Dim, opt.Dir, m.Dim())
		}
		return m, nil
	}
	return NewHashed(opt.hashedOptions())
}
