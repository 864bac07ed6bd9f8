// Command toolsmith is Toolsmith with everything: the production commands
// of cmd/toolsmith-server plus `toolsmith dev`, the whole system in one
// process on an in-process Temporal server with its Web UI (what `make
// run` starts), and the measurements that run it (bench, eval). The
// commands live in internal/cli; this binary adds the in-process server.
package main

import (
	"context"
	"log/slog"
	"os"

	"go.temporal.io/sdk/client"

	"github.com/toolsmith/toolsmith/internal/cli"
	"github.com/toolsmith/toolsmith/internal/cli/devtemporal"
	"github.com/toolsmith/toolsmith/internal/config"
)

func main() { os.Exit(cli.Main(startDevTemporal)) }

// startDevTemporal is devtemporal.Start as a cli.DevTemporalStarter.
func startDevTemporal(ctx context.Context, cfg config.Config, log *slog.Logger, mh client.MetricsHandler) (cli.DevTemporal, client.Client, error) {
	ts, c, err := devtemporal.Start(ctx, cfg, log, mh)
	if err != nil {
		return nil, nil, err // not a typed nil *Server in the interface
	}
	return ts, c, nil
}
