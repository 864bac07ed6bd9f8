package cli

import (
	"context"
	"fmt"

	"github.com/toolsmith/toolsmith/embed"
	"github.com/toolsmith/toolsmith/evaluation"
	"github.com/toolsmith/toolsmith/internal/config"
)

// runEval is `toolsmith eval` (and `toolsmith eval split`): retrieval quality
// on a MetaTool-format set; see evaluation.Usage. The built-in USE-Lite
// embedder's weights come from --model-dir, default $TOOLSMITH_MODEL_DIR or
// <data-dir>/models/use-lite-0.2.0, and are fetched there when missing.
//
// It is an old-style command (it parses its own arguments; see the package
// comment), so `toolsmith eval -h` prints evaluation.Usage.
func runEval(ctx context.Context, e *env, args []string) error {
	cfg := config.Default()
	if dir, ok := e.lookupEnv("TOOLSMITH_MODEL_DIR"); ok && dir != "" {
		cfg.ModelDir = dir
	}
	if err := cfg.Resolve(); err != nil {
		return err
	}
	load := func(dir string) (embed.Model, error) {
		m, err := embed.New(ctx, embed.Config{Provider: config.EmbedderUSELite, ModelDir: dir}, e.stderr)
		if err != nil {
			return nil, fmt.Errorf("use-lite in %s: %w", dir, err)
		}
		return m, nil
	}
	return evaluation.Command(ctx, args, e.stdout, e.stderr, cfg.ModelDir, load)
}
