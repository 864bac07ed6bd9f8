package metrics_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/metrics"
)

// series counts the series of one metric family in m's registry.
func series(t *testing.T, m *metrics.Metrics, name string) int {
	t.Helper()
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, f := range fams {
		if f.GetName() == name {
			return len(f.GetMetric())
		}
	}
	return 0
}

// TestLabelsComeFromABoundedSet: whatever callers send, label values are
// valid text (no panic on invalid UTF-8) and their number is bounded.
func TestLabelsComeFromABoundedSet(t *testing.T) {
	m := metrics.New()
	m.GroupRequest([]string{"\xff", "ok"})
	for i := 0; i < 1000; i++ {
		m.GroupRequest([]string{fmt.Sprintf("g%d", i)})
		m.HTTPRequest(fmt.Sprintf("M%d", i), "", 404, time.Millisecond)
	}
	if n := series(t, m, "agent_tool_group_requests_total"); n > metrics.MaxGroupLabels+1 {
		t.Errorf("group label values: %d series, want at most %d", n, metrics.MaxGroupLabels+1)
	}
	if n := series(t, m, "toolsmith_http_requests_total"); n > 10 {
		t.Errorf("method label values: %d series for one route and code, want a handful", n)
	}
}
