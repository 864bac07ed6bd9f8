package e2e

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/workflows"
)

// BenchmarkSubstituteEndToEnd measures the substitute branch through the
// whole stack: POST /api/v1/verbs?wait=30s → NovelVerbWorkflow on the
// in-process server → SearchTools (retrieval over SQLite, hashing embedder)
// → ExecuteTool → the demo currency module on httptest → the result in the
// HTTP response. It reports p50 and p95 in milliseconds (targets: 75 / 150).
func BenchmarkSubstituteEndToEnd(b *testing.B) {
	e := newEnv(b)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		var run verbRun
		code := e.post("/api/v1/verbs?wait=30s", convertBody, &run)
		lat = append(lat, time.Since(start))
		if code != http.StatusOK || run.Result.Branch != workflows.BranchSubstitute {
			b.Fatalf("run %d: HTTP %d status %q branch %q error %q", i, code, run.Status, run.Result.Branch, run.Error)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric(0, "ns/op")
}
