package temporalserver

import (
	"bytes"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
)

func TestShutdownWarningsAreDebug(t *testing.T) {
	var buf bytes.Buffer
	var stopping atomic.Bool
	l := slogLogger{log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), min: slog.LevelWarn, stopping: &stopping}
	w := l.With()
	w.Info("dropped while running")
	w.Warn("warned while running")
	stopping.Store(true)
	w.Warn("Failed to poll for task.")
	w.Error("still an error")
	got := buf.String()
	tests := []struct{ line, want string }{
		{"warned while running", "level=WARN"},
		{"Failed to poll for task.", "level=DEBUG"},
		{"still an error", "level=ERROR"},
	}
	for _, tt := range tests {
		found := false
		for _, l := range strings.Split(got, "\n") {
			if strings.Contains(l, tt.line) {
				found = true
				if !strings.Contains(l, tt.want) {
					t.Errorf("%q logged as %q, want %s", tt.line, l, tt.want)
				}
			}
		}
		if !found {
			t.Errorf("%q not logged:\n%s", tt.line, got)
		}
	}
	if strings.Contains(got, "dropped while running") {
		t.Errorf("info record below min logged:\n%s", got)
	}
}
