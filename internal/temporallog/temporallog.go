// Package temporallog adapts a slog.Logger for the Temporal SDK. It is a
// leaf package so that the production binary, which only dials Temporal,
// does not link the in-process server (internal/temporalserver) to get it.
package temporallog

import (
	"context"
	"log/slog"

	sdklog "go.temporal.io/sdk/log"
)

// Quiet adapts l for the SDK, dropping debug and info records (the SDK
// logs every worker start and stop at info).
func Quiet(l *slog.Logger) sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(levelHandler{min: slog.LevelWarn, Handler: l.Handler()}))
}

type levelHandler struct {
	min slog.Level
	slog.Handler
}

func (h levelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}
