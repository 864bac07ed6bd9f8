package embed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/embed/use"
)

// Provider names accepted in Config.Provider.
const (
	ProviderUSELite = "use-lite"
	ProviderHashing = "hashing"
	ProviderOllama  = "ollama"
	ProviderOpenAI  = "openai"
)

// Providers lists the accepted Config.Provider values.
var Providers = []string{ProviderUSELite, ProviderHashing, ProviderOllama, ProviderOpenAI}

// maxHashingDimension bounds Config.Dimension for the hashing provider.
const maxHashingDimension = 1 << 16

var (
	// ErrInvalidConfig reports a Config that fails Validate.
	ErrInvalidConfig = errors.New("invalid embedder config")
	// ErrDimensionMismatch reports a vector whose length is not the model's
	// dimension, or a configured dimension the model does not produce.
	ErrDimensionMismatch = errors.New("embedding dimension mismatch")
)

// Static checks that the built-in embedders are Models.
var (
	_ Model = (*use.Model)(nil)
	_ Model = (*hashing.Embedder)(nil)
)

// Config selects and configures an embedding model.
type Config struct {
	// Provider is one of use-lite (default model, pure Go, weights fetched
	// with npm on first use), hashing (no download), ollama or openai
	// (any OpenAI-compatible /v1/embeddings server).
	Provider string
	// Model is the remote model name (ollama, openai); unused otherwise.
	Model string
	// BaseURL is the remote server: Ollama's root URL, or the OpenAI API
	// base including /v1. Empty means the client's default.
	BaseURL string
	// APIKey authenticates to the openai provider.
	APIKey string
	// ModelDir holds the use-lite weights (e.g. .cache/models/use-lite-0.2.0).
	ModelDir string
	// Dimension is the vector length: the hashing dimension (0 means 256);
	// for use-lite it must be 0 or 512; for remote providers, 0 or the
	// dimension the model is expected to return.
	Dimension int
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("embed: config: %w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
}

// Validate checks c without contacting anything; errors name the field.
func (c Config) Validate() error {
	if c.Dimension < 0 {
		return invalid("Dimension %d is negative", c.Dimension)
	}
	switch c.Provider {
	case ProviderUSELite:
		if c.ModelDir == "" {
			return invalid("ModelDir is required for provider %q", c.Provider)
		}
		if c.Dimension != 0 && c.Dimension != use.Dimension {
			return invalid("Dimension %d: provider %q always produces %d", c.Dimension, c.Provider, use.Dimension)
		}
	case ProviderHashing:
		if c.Dimension > maxHashingDimension {
			return invalid("Dimension %d exceeds %d", c.Dimension, maxHashingDimension)
		}
	case ProviderOllama, ProviderOpenAI:
		if strings.TrimSpace(c.Model) == "" {
			return invalid("Model is required for provider %q", c.Provider)
		}
		if c.Provider == ProviderOpenAI && c.APIKey == "" {
			return invalid("APIKey is required for provider %q", c.Provider)
		}
		if c.BaseURL != "" {
			u, err := url.Parse(c.BaseURL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return invalid("BaseURL %q is not an absolute http(s) URL", c.BaseURL)
			}
		}
	case "":
		return invalid("Provider is required (one of %s)", strings.Join(Providers, ", "))
	default:
		return invalid("Provider %q is not one of %s", c.Provider, strings.Join(Providers, ", "))
	}
	return nil
}

// New builds the Model c describes. use-lite fetches the weights into
// ModelDir first if they are missing (progress lines go to progress, which
// may be nil) and loads them; ollama and openai embed a probe string to learn
// their dimension, so New fails fast when the server is unreachable.
func New(ctx context.Context, c Config, progress io.Writer) (Model, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	switch c.Provider {
	case ProviderUSELite:
		if err := use.Fetch(ctx, c.ModelDir, progress); err != nil {
			return nil, fmt.Errorf("embed: new %s: %w", c.Provider, err)
		}
		m, err := use.Load(c.ModelDir)
		if err != nil {
			return nil, fmt.Errorf("embed: new %s: %w", c.Provider, err)
		}
		return m, nil
	case ProviderHashing:
		return hashing.New(c.Dimension), nil
	case ProviderOllama:
		opts := []ollama.Option{ollama.WithModel(c.Model)}
		if c.BaseURL != "" {
			opts = append(opts, ollama.WithServerURL(c.BaseURL))
		}
		llm, err := ollama.New(opts...)
		if err != nil {
			return nil, fmt.Errorf("embed: new ollama: %w", err)
		}
		return newRemote(ctx, "ollama:"+c.Model, llm, c.Dimension)
	case ProviderOpenAI:
		opts := []openai.Option{openai.WithToken(c.APIKey), openai.WithEmbeddingModel(c.Model), openai.WithModel(c.Model)}
		if c.BaseURL != "" {
			opts = append(opts, openai.WithBaseURL(c.BaseURL))
		}
		llm, err := openai.New(opts...)
		if err != nil {
			return nil, fmt.Errorf("embed: new openai: %w", err)
		}
		return newRemote(ctx, "openai:"+c.Model, llm, c.Dimension)
	}
	return nil, invalid("Provider %q", c.Provider) // unreachable after Validate
}

// dimensionProbe is embedded once at construction to learn a remote model's
// dimension.
const dimensionProbe = "dimension probe"

// remote adapts a langchaingo embeddings client to Model and checks every
// vector's length.
type remote struct {
	e    embeddings.Embedder
	name string
	dim  int
}

func newRemote(ctx context.Context, name string, client embeddings.EmbedderClient, want int) (*remote, error) {
	e, err := embeddings.NewEmbedder(client)
	if err != nil {
		return nil, fmt.Errorf("embed: new %s: %w", name, err)
	}
	v, err := e.EmbedQuery(ctx, dimensionProbe)
	if err != nil {
		return nil, fmt.Errorf("embed: new %s: probe: %w", name, err)
	}
	if len(v) == 0 {
		return nil, fmt.Errorf("embed: new %s: probe: %w: empty vector", name, ErrDimensionMismatch)
	}
	if want != 0 && len(v) != want {
		return nil, fmt.Errorf("embed: new %s: %w: configured Dimension %d, model returns %d", name, ErrDimensionMismatch, want, len(v))
	}
	return &remote{e: e, name: name, dim: len(v)}, nil
}

// Name returns "<provider>:<model>".
func (r *remote) Name() string { return r.name }

// Dimension returns the probed dimension.
func (r *remote) Dimension() int { return r.dim }

// EmbedQuery embeds one text.
func (r *remote) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := r.e.EmbedQuery(ctx, text)
	if err != nil {
		return nil, fmt.Errorf("embed: %s: %w", r.name, err)
	}
	if len(v) != r.dim {
		return nil, fmt.Errorf("embed: %s: %w: got %d, want %d", r.name, ErrDimensionMismatch, len(v), r.dim)
	}
	return v, nil
}

// EmbedDocuments embeds texts in order.
func (r *remote) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	vs, err := r.e.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed: %s: %w", r.name, err)
	}
	if len(vs) != len(texts) {
		return nil, fmt.Errorf("embed: %s: %d vectors for %d texts", r.name, len(vs), len(texts))
	}
	for k, v := range vs {
		if len(v) != r.dim {
			return nil, fmt.Errorf("embed: %s: document %d: %w: got %d, want %d", r.name, k, ErrDimensionMismatch, len(v), r.dim)
		}
	}
	return vs, nil
}
