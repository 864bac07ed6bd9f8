package cli

import (
	"context"
	"log/slog"

	"go.temporal.io/sdk/client"

	"github.com/toolsmith/toolsmith/internal/cli/devtemporal"
	"github.com/toolsmith/toolsmith/internal/config"
)

// testDevTemporal is what cmd/toolsmith hands Main: the tests run the
// binary with every command, dev included, on the real in-process server.
func testDevTemporal(ctx context.Context, cfg config.Config, log *slog.Logger, mh client.MetricsHandler) (DevTemporal, client.Client, error) {
	ts, c, err := devtemporal.Start(ctx, cfg, log, mh)
	if err != nil {
		return nil, nil, err
	}
	return ts, c, nil
}
