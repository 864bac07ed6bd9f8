package main

import (
	"context"
	"fmt"

	"github.com/toolsmith/toolsmith/embed/use"
	"github.com/toolsmith/toolsmith/internal/config"
)

// runModelFetch fetches the built-in USE-Lite embedder's weights into
// --model-dir (default <data-dir>/models/use-lite-0.2.0) and exits. It is a
// no-op when the directory is already complete. `make test` runs it first.
func runModelFetch(ctx context.Context, e *env, args []string) error {
	cfg, rest, err := config.Parse("toolsmith model fetch", config.FlagsModel, args, e.lookupEnv, e.stderr)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("model fetch: unexpected arguments %q: %w", rest, config.ErrInvalid)
	}
	if err := use.Fetch(ctx, cfg.ModelDir, e.stderr); err != nil {
		return fmt.Errorf("fetch %s@%s into %s: %w", use.PackageName, use.PackageVersion, cfg.ModelDir, err)
	}
	fmt.Fprintf(e.stdout, "model %s ready in %s\n", use.ModelName, cfg.ModelDir)
	return nil
}
