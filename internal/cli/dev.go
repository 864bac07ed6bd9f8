package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/toolsmith/toolsmith/demo"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/config"
)

// devReadiness are the parts dev waits for before /healthz answers 200 (the
// README quotes the 503 reason they make).
var devReadiness = []string{"demo catalogue", "search warm-up", "worker"}

// newDevCommand is `toolsmith dev`.
func newDevCommand(e *env) *cobra.Command {
	return newConfigCommand("dev", config.FlagsServe|config.FlagsDemo|config.FlagsTemporal|config.FlagsWorker, runDev)(e)
}

// runDev runs the whole system in one process on embedded defaults: the
// SQLite store in the data dir, the built-in embedder (weights fetched on
// first start), the registry, retrieval, an in-process Temporal server with
// its Web UI (history in the data dir), the worker, the demo modules and the
// API. On first start (an empty store) it loads the demo catalogue unless
// --no-demo; /healthz answers 503 until everything is up.
func runDev(ctx context.Context, e *env, cfg config.Config) error {
	// A taken --http-addr is found before the data dir, the owner key,
	// the store and Temporal's state are created for a server that cannot
	// start.
	if err := addrFree(cfg.HTTPAddr); err != nil {
		return err
	}
	lock, err := lockDataDir(cfg)
	if err != nil {
		return err
	}
	defer func() { _ = lock.Release() }()
	log, sys, err := openCommand(ctx, e, cfg)
	if err != nil {
		return err
	}
	defer closeSystem(sys, log)
	fmt.Fprintf(e.stderr, "starting the in-process Temporal server on %s (first start creates its database)…\n", cfg.Temporal.Addr)
	ts, c, err := e.devTemporal(ctx, cfg, log, sys.metrics.TemporalHandler())
	if err != nil {
		return err
	}
	defer ts.Stop()
	demoMods, demoSrv, demoLn, err := serveDemoModules()
	if err != nil {
		c.Close()
		return err
	}
	mc, err := moduleConfig(cfg, demoMods)
	if err != nil {
		c.Close()
		return err
	}
	f, err := newFulfilment(ctx, cfg, sys, c, ts.UIURL(), mc, true)
	if err != nil {
		c.Close()
		return err
	}
	defer f.stop()
	ready := newReadiness(devReadiness...)
	return serve(ctx, e, sys, log, serveOptions{
		ready:    ready,
		mounters: f.mounters(cfg),
		handlers: f.handlers(ctx, sys),
		setup: func(ctx context.Context, g *group) error {
			g.Go(ctx, "demo modules", func(ctx context.Context) error {
				go func() { <-ctx.Done(); _ = demoSrv.Close() }()
				if err := demoSrv.Serve(demoLn); !errors.Is(err, http.ErrServerClosed) {
					return err
				}
				return nil // closed because ctx ended: a clean stop
			})
			if err := loadDemo(ctx, e, sys, cfg); err != nil {
				return err
			}
			ready.done("demo catalogue")
			if err := warmUp(ctx, sys); err != nil {
				return err
			}
			ready.done("search warm-up")
			if err := f.start(ctx, cfg, log); err != nil {
				return err
			}
			ready.done("worker")
			return nil
		},
		urls: func(base string) []string {
			lines := []string{"Console  " + base + "/ui/", "MCP      " + base + "/mcp", "Temporal " + ts.Addr() + " (namespace " + ts.Namespace() + ")"}
			if ts.UIURL() != "" {
				lines = append(lines, "Web UI   "+ts.UIURL())
			}
			return lines
		},
	})
}

// loadDemo loads the demo catalogue when the store holds no tool at all
// (first start) and --no-demo is not set. Later starts leave the store
// alone, so tools edited or deprecated through the API stay as they are.
func loadDemo(ctx context.Context, e *env, sys *system, cfg config.Config) error {
	if cfg.NoDemo {
		sys.log.Info("demo catalogue skipped (--no-demo)")
		return nil
	}
	page, err := sys.store.ListTools(ctx, graph.ListQuery{Limit: 1, Filter: graph.Filter{
		Statuses: []string{graph.StatusActive, graph.StatusDeprecated, graph.StatusDisabled},
	}})
	if err != nil {
		return fmt.Errorf("check for a first start: %w", err)
	}
	if len(page.Items) > 0 {
		sys.log.Info("store already holds tools; demo catalogue not loaded")
		return nil
	}
	n, err := demo.Load(ctx, sys.registry, e.stderr)
	if err != nil {
		return fmt.Errorf("load demo catalogue: %w", err)
	}
	sys.log.Info("demo catalogue loaded", "tools", n)
	return nil
}
