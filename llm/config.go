package llm

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// Providers.
const (
	ProviderNone   = "none"
	ProviderOpenAI = "openai"
	ProviderOllama = "ollama"
)

// Config selects and configures the model. The zero value is ProviderNone.
type Config struct {
	// Provider is none (default), openai or ollama.
	Provider string `json:"provider" yaml:"provider"`
	// BaseURL is the server: for openai an OpenAI-compatible API root
	// including /v1 (e.g. http://127.0.0.1:8000/v1); for ollama the server
	// (default http://127.0.0.1:11434).
	BaseURL string `json:"baseUrl" yaml:"baseUrl"`
	// Model names the model, e.g. gpt-4o-mini or llama3.1.
	Model string `json:"model" yaml:"model"`
	// APIKey is the bearer token for openai (many local servers accept any).
	APIKey string `json:"-" yaml:"-"`
}

// Enabled reports whether a model is configured.
func (c Config) Enabled() bool {
	p := strings.ToLower(strings.TrimSpace(c.Provider))
	return p != "" && p != ProviderNone
}

// Validate checks the provider, the URL and that a model is named.
func (c Config) Validate() error {
	v := &fault.ValidationError{}
	switch strings.ToLower(strings.TrimSpace(c.Provider)) {
	case "", ProviderNone:
		return nil
	case ProviderOpenAI, ProviderOllama:
	default:
		v.Add("llm.provider", "must be one of none, openai, ollama; got %q", c.Provider)
		return v
	}
	if c.Model == "" {
		v.Add("llm.model", "is required for provider %s", c.Provider)
	}
	if c.BaseURL != "" {
		u, err := url.Parse(c.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.Add("llm.baseUrl", "must be an http(s) URL, got %q", c.BaseURL)
		}
	}
	return v.Err()
}

// New builds the configured model; ProviderNone returns (nil, nil). The
// model is built once per process and shared: langchaingo clients are safe
// for concurrent use.
func New(cfg Config) (llms.Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("llm: config: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(cfg.Provider)) {
	case ProviderOpenAI:
		opts := []openai.Option{openai.WithModel(cfg.Model)}
		if cfg.BaseURL != "" {
			opts = append(opts, openai.WithBaseURL(cfg.BaseURL))
		}
		token := cfg.APIKey
		if token == "" {
			// langchaingo refuses an empty token; OpenAI-compatible local
			// servers ignore it, and OpenAI itself will answer 401.
			token = "none"
		}
		opts = append(opts, openai.WithToken(token))
		m, err := openai.New(opts...)
		if err != nil {
			return nil, fmt.Errorf("llm: openai: %w", err)
		}
		return m, nil
	case ProviderOllama:
		opts := []ollama.Option{ollama.WithModel(cfg.Model)}
		if cfg.BaseURL != "" {
			opts = append(opts, ollama.WithServerURL(cfg.BaseURL))
		}
		m, err := ollama.New(opts...)
		if err != nil {
			return nil, fmt.Errorf("llm: ollama: %w", err)
		}
		return m, nil
	default:
		return nil, nil
	}
}
