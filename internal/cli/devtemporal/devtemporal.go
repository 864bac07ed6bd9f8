// Package devtemporal starts the in-process Temporal server (with its Web
// UI) that `toolsmith dev` runs on. Only cmd/toolsmith links it: the
// server and its UI are nearly all of that binary's size, and the
// production binary (cmd/toolsmith-server) dials an external Temporal
// instead. internal/cli reaches it through cli.DevTemporalStarter.
package devtemporal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"go.temporal.io/sdk/client"

	"github.com/toolsmith/toolsmith/internal/config"
	"github.com/toolsmith/toolsmith/internal/temporalserver"
	"github.com/toolsmith/toolsmith/workflows"
)

// Start starts the in-process Temporal server (SQLite under the data dir,
// so history survives restarts) with its Web UI and the custom search
// attributes, and dials a client that the worker and the API share.
func Start(ctx context.Context, cfg config.Config, log *slog.Logger, mh client.MetricsHandler) (*temporalserver.Server, client.Client, error) {
	ts, err := temporalserver.Start(ctx, temporalserver.Options{
		DataDir:          cfg.DataDir,
		FrontendAddr:     cfg.Temporal.Addr,
		UIAddr:           cfg.Temporal.UIAddr,
		Namespace:        cfg.Temporal.Namespace,
		SearchAttributes: workflows.SearchAttributes(),
		Logger:           log,
	})
	if err != nil {
		var le *temporalserver.ListenError
		if errors.As(err, &le) {
			return nil, nil, listenError(le)
		}
		return nil, nil, fmt.Errorf("start the in-process Temporal server on --temporal-addr %s: %w", cfg.Temporal.Addr, err)
	}
	c, err := ts.Dial(ctx, client.Options{MetricsHandler: mh})
	if err != nil {
		ts.Stop()
		return nil, nil, err
	}
	return ts, c, nil
}

// listenError says which port the in-process Temporal server could not
// bind and which flag moves it (a second dev beside a running one).
func listenError(le *temporalserver.ListenError) error {
	flag, what := "temporal-addr", "Temporal frontend"
	if le.Role == temporalserver.RoleUI {
		flag, what = "ui-addr", "Temporal Web UI"
	}
	_, port, _ := net.SplitHostPort(le.Addr)
	if le.InUse() {
		return fmt.Errorf("the %s cannot listen on %s: port %s is already in use (another toolsmith dev?); "+
			"stop that process or choose a free port with --%s (%s): %w", what, le.Addr, port, flag, config.EnvName(flag), le)
	}
	return fmt.Errorf("the %s cannot listen on %s (port %s); choose another address with --%s (%s): %w",
		what, le.Addr, port, flag, config.EnvName(flag), le)
}
