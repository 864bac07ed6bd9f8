package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/toolsmith/toolsmith/internal/config"
)

// newAPICommand is `toolsmith api`.
func newAPICommand(e *env) *cobra.Command {
	return newConfigCommand("api", config.FlagsServe|config.FlagsTemporal|config.FlagsWorker, runAPI)(e)
}

// runAPI serves the HTTP API against the configured store (--store sqlite
// or neo4j) and an external Temporal cluster (--temporal-addr or
// TEMPORAL_ADDRESS), whose workers (`toolsmith worker`) run the workflows
// the API starts. Unlike dev it never loads the demo catalogue.
func runAPI(ctx context.Context, e *env, cfg config.Config) error {
	log, sys, done, err := openSharedCommand(ctx, e, cfg, "toolsmith api")
	if err != nil {
		return err
	}
	defer done()
	c, err := dialTemporal(ctx, cfg, log, sys.metrics.TemporalHandler())
	if err != nil {
		return err
	}
	f, err := newFulfilment(ctx, cfg, sys, c, cfg.Temporal.UIURL, modulesNone(), false)
	if err != nil {
		c.Close()
		return err
	}
	defer f.stop()
	return serve(ctx, e, sys, log, serveOptions{mounters: f.mounters(cfg), handlers: f.handlers(ctx, sys)})
}
