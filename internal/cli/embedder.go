package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/toolsmith/toolsmith/embed"
	"github.com/toolsmith/toolsmith/internal/config"
)

// openEmbedder builds the configured embedder through embed.New (retrieval
// keeps its own query-embedding cache). The built-in USE-Lite model fetches its weights into
// --model-dir on first use, writing progress to progress.
func openEmbedder(ctx context.Context, cfg config.Config, progress io.Writer) (embed.Model, error) {
	m, err := embed.New(ctx, embed.Config{
		Provider: cfg.Embedder,
		Model:    cfg.EmbedderModel,
		BaseURL:  cfg.EmbedderURL,
		APIKey:   cfg.EmbedderAPIKey,
		ModelDir: cfg.ModelDir,
	}, progress)
	switch {
	case errors.Is(err, embed.ErrInvalidConfig):
		return nil, fmt.Errorf("embedder (--embedder %s): %w: %w", cfg.Embedder, config.ErrInvalid, err)
	case err != nil && cfg.Embedder == config.EmbedderUSELite:
		return nil, fmt.Errorf("embedder %s with --model-dir %s: %w", cfg.Embedder, cfg.ModelDir, err)
	case err != nil:
		return nil, fmt.Errorf("embedder %s: %w", cfg.Embedder, err)
	}
	return m, nil
}
