package e2e

import (
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/internal/testwait"
)

// eventually is testwait.Eventually, the one way these tests wait for what
// happens asynchronously (a workflow's end, a schedule's run, visibility,
// the query log, a catalogue update).
func eventually(t testing.TB, within time.Duration, cond func() error) {
	t.Helper()
	testwait.Eventually(t, within, cond)
}
