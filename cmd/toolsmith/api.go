package main

import (
	"context"

	"github.com/toolsmith/toolsmith/internal/config"
)

// runAPI serves the HTTP API against the configured store (--store sqlite
// or neo4j) and an external Temporal cluster (--temporal-addr or
// TEMPORAL_ADDRESS), whose workers (`toolsmith worker`) run the workflows
// the API starts. Unlike dev it never loads the demo catalogue.
func runAPI(ctx context.Context, e *env, args []string) error {
	cfg, log, sys, err := startCommand(ctx, e, "api", config.FlagsServe|config.FlagsTemporal|config.FlagsWorker, args)
	if err != nil {
		return err
	}
	defer closeSystem(sys, log)
	c, err := dialTemporal(ctx, cfg, log)
	if err != nil {
		return err
	}
	f, err := newFulfilment(ctx, cfg, sys, c, cfg.Temporal.UIURL, modulesNone(), false)
	if err != nil {
		c.Close()
		return err
	}
	defer f.stop()
	return serve(ctx, e, sys, log, serveOptions{mounters: f.mounters(cfg)})
}
