package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/toolsmith/toolsmith/internal/config"
	"github.com/toolsmith/toolsmith/modules"
	"github.com/toolsmith/toolsmith/workflows"
)

// newWorkerCommand is `toolsmith worker`.
func newWorkerCommand(e *env) *cobra.Command {
	return newConfigCommand("worker", config.FlagsServe|config.FlagsTemporal|config.FlagsWorker, runWorker)(e)
}

// runWorker runs the Temporal worker (every workflow and activity) against
// an external cluster (--temporal-addr or TEMPORAL_ADDRESS) and the
// configured store, until SIGINT/SIGTERM. It keeps the module discovery
// schedule in place.
func runWorker(ctx context.Context, e *env, cfg config.Config) error {
	log, sys, done, err := openSharedCommand(ctx, e, cfg, "toolsmith worker")
	if err != nil {
		return err
	}
	defer done()
	mc, err := moduleConfig(cfg, nil)
	if err != nil {
		return err
	}
	c, err := dialTemporal(ctx, cfg, log, sys.metrics.TemporalHandler())
	if err != nil {
		return err
	}
	f, err := newFulfilment(ctx, cfg, sys, c, cfg.Temporal.UIURL, mc, true)
	if err != nil {
		c.Close()
		return err
	}
	defer f.stop()
	if err := f.start(ctx, cfg, log); err != nil {
		return err
	}
	g, gctx := newGroup(ctx, log)
	followRanking(gctx, g, sys, log)
	followStore(gctx, g, sys, log)
	fmt.Fprintf(e.stdout, "Toolsmith worker %s is polling task queue %q on %s (namespace %s). Press Ctrl+C to stop.\n", version, workflows.TaskQueue, cfg.Temporal.Addr, cfg.Temporal.Namespace)
	<-ctx.Done()
	_ = g.Wait()
	log.Info("worker shutting down")
	return nil
}

// modulesNone is the empty routing table of a process that runs no worker.
func modulesNone() modules.Config { return modules.NewConfig() }
