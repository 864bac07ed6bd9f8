//go:build record

package replay

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/toolsmith/toolsmith/internal/temporalserver"
	"github.com/toolsmith/toolsmith/worker"
	"github.com/toolsmith/toolsmith/workflows"
	"github.com/toolsmith/toolsmith/workflows/workflowstest"
)

// BenchmarkSubstituteWorkflow measures the substitute branch on the
// in-process server with a scripted searcher and the demo module (no
// embedding, no API): the workflow's own share of the end-to-end budget,
// from the client's start to its result. Besides ns/op (the mean) it
// reports the p50 and p95 latencies. Every run must take the substitute
// branch.
//
//	go test -tags record -run '^$' -bench SubstituteWorkflow ./workflows/replay
func BenchmarkSubstituteWorkflow(b *testing.B) {
	ctx := context.Background()
	srv, err := temporalserver.Start(ctx, temporalserver.Options{FrontendAddr: "127.0.0.1:0", SearchAttributes: workflows.SearchAttributes()})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Stop()
	c, err := srv.Dial(ctx, client.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	f := workflowstest.New(b, nil)
	// A clear match the default rule substitutes.
	f.ClearHit("convert currency", "currency.convert")
	w := worker.New(c, worker.Deps{Searcher: f.Searcher, Router: f.Router, Gaps: f.Gaps, Tools: f})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	in := workflows.NovelVerbInput{Verb: "CONVERT_CURRENCY", Inputs: map[string]any{"amount": 100, "from": "USD", "to": "EUR"}}
	i := 0
	runOnce := func() time.Duration {
		start := time.Now()
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("lat-%d", i), TaskQueue: workflows.TaskQueue}, workflows.NovelVerbWorkflow, in)
		if err != nil {
			b.Fatal(err)
		}
		i++
		var res workflows.NovelVerbResult
		if err := run.Get(ctx, &res); err != nil || res.Branch != workflows.BranchSubstitute {
			b.Fatalf("run %d: %v %q", i, err, res.Branch)
		}
		return time.Since(start)
	}
	for range 10 { // warm up: first runs pay for caches and connections
		runOnce()
	}
	var lat []time.Duration
	for b.Loop() {
		lat = append(lat, runOnce())
	}
	slices.Sort(lat)
	n := len(lat)
	b.ReportMetric(float64(lat[n/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[n*95/100].Microseconds())/1000, "p95-ms")
}
