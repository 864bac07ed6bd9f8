//go:build record

package replay

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/toolsmith/toolsmith/internal/temporalserver"
	"github.com/toolsmith/toolsmith/worker"
	"github.com/toolsmith/toolsmith/workflows"
	"github.com/toolsmith/toolsmith/workflows/workflowstest"
)

// TestSubstituteLatency measures the substitute branch on the in-process
// server with a scripted searcher and the demo module (no embedding, no
// API): the workflow's own share of the end-to-end budget.
//
//	go test -tags record ./workflows/replay -run TestSubstituteLatency -v
func TestSubstituteLatency(t *testing.T) {
	if os.Getenv("TOOLSMITH_MEASURE") != "1" {
		t.Skip("set TOOLSMITH_MEASURE=1 to measure")
	}
	ctx := context.Background()
	srv, err := temporalserver.Start(ctx, temporalserver.Options{FrontendAddr: "127.0.0.1:0", SearchAttributes: workflows.SearchAttributes()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c, err := srv.Dial(ctx, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f := workflowstest.New(t, nil)
	// A clear match the default rule substitutes.
	f.ClearHit("convert currency", "currency.convert")
	w := worker.New(c, worker.Deps{Searcher: f.Searcher, Router: f.Router, Gaps: f.Gaps, Tools: f})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	in := workflows.NovelVerbInput{Verb: "CONVERT_CURRENCY", Inputs: map[string]any{"amount": 100, "from": "USD", "to": "EUR"}}
	const warm, n = 10, 100
	var lat []time.Duration
	for i := 0; i < warm+n; i++ {
		start := time.Now()
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("lat-%d", i), TaskQueue: workflows.TaskQueue}, workflows.NovelVerbWorkflow, in)
		if err != nil {
			t.Fatal(err)
		}
		var res workflows.NovelVerbResult
		if err := run.Get(ctx, &res); err != nil || res.Branch != workflows.BranchSubstitute {
			t.Fatalf("run %d: %v %q", i, err, res.Branch)
		}
		if i >= warm {
			lat = append(lat, time.Since(start))
		}
	}
	slices.Sort(lat)
	t.Logf("substitute workflow (client start → result), n=%d: p50 %v p95 %v max %v", n, lat[n/2], lat[n*95/100], lat[n-1])
}
