package temporalserver

import (
	"context"
	"log/slog"
	"sync/atomic"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// slogLogger adapts the server's tag logger to slog, dropping records below
// min so the server stays quiet unless something is wrong. Once stopping is
// set, warnings go out at debug level: while the services stop one after
// the other, the server's internal workers and clients warn about the
// connections they lose, which is what a clean shutdown looks like.
type slogLogger struct {
	log      *slog.Logger
	min      slog.Level
	stopping *atomic.Bool
}

var _ log.Logger = slogLogger{}
var _ log.WithLogger = slogLogger{}

func (s slogLogger) Debug(msg string, tags ...tag.Tag) { s.emit(slog.LevelDebug, msg, tags) }
func (s slogLogger) Info(msg string, tags ...tag.Tag)  { s.emit(slog.LevelInfo, msg, tags) }
func (s slogLogger) Warn(msg string, tags ...tag.Tag)  { s.emit(slog.LevelWarn, msg, tags) }
func (s slogLogger) Error(msg string, tags ...tag.Tag) { s.emit(slog.LevelError, msg, tags) }

// DPanic, Panic and Fatal are logged as errors: an embedded server must not
// take the host process down through its logger.
func (s slogLogger) DPanic(msg string, tags ...tag.Tag) { s.emit(slog.LevelError, msg, tags) }
func (s slogLogger) Panic(msg string, tags ...tag.Tag)  { s.emit(slog.LevelError, msg, tags) }
func (s slogLogger) Fatal(msg string, tags ...tag.Tag)  { s.emit(slog.LevelError, msg, tags) }

// With returns a logger that prepends tags to every record.
func (s slogLogger) With(tags ...tag.Tag) log.Logger {
	return slogLogger{log: s.log.With(attrsAny(tags)...), min: s.min, stopping: s.stopping}
}

func (s slogLogger) emit(level slog.Level, msg string, tags []tag.Tag) {
	switch {
	case s.stopping != nil && s.stopping.Load() && level < slog.LevelError:
		level = slog.LevelDebug
	case level < s.min:
		return
	}
	if !s.log.Enabled(context.Background(), level) {
		return
	}
	attrs := make([]slog.Attr, len(tags))
	for i, t := range tags {
		attrs[i] = slog.Any(t.Key(), t.Value())
	}
	s.log.LogAttrs(context.Background(), level, msg, attrs...)
}

func attrsAny(tags []tag.Tag) []any {
	out := make([]any, len(tags))
	for i, t := range tags {
		out[i] = slog.Any(t.Key(), t.Value())
	}
	return out
}
