package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/toolsmith/toolsmith/analytics"
	apianalytics "github.com/toolsmith/toolsmith/api/analytics"
	"github.com/toolsmith/toolsmith/api/verbs"
	"github.com/toolsmith/toolsmith/workflows"
)

// TestScheduledAnalytics runs the analytics workflow on the in-process
// Temporal server after a fulfilled verb and an unfulfilled one: the
// stored report (GET …/admin/analytics?source=scheduled) has the gap and
// the usage, and ranking gets the used tool's popularity.
func TestScheduledAnalytics(t *testing.T) {
	e := newEnv(t)
	e.serve(verbs.New(e.client, e.store, verbs.Config{TaskQueue: e.queue, Namespace: server.Namespace()}),
		apianalytics.New(e.store, verbs.Runs{Temporal: e.client, Namespace: server.Namespace()}))
	if code := e.do(http.MethodGet, "/api/v1/tools/admin/analytics?source=scheduled", nil, nil, nil); code != http.StatusNotFound {
		t.Fatalf("scheduled analytics before any run: HTTP %d", code)
	}
	var run verbRun
	if code := e.post("/api/v1/verbs?wait=30s", convertBody, &run); code != http.StatusOK || run.Result.Branch != workflows.BranchSubstitute {
		t.Fatalf("convert: HTTP %d %+v", code, run.Result)
	}
	if code := e.post("/api/v1/verbs?wait=30s", map[string]any{"verb": "WHITTLE_SPOON", "description": "whittle a wooden spoon"}, &run); code != http.StatusOK {
		t.Fatalf("whittle: HTTP %d", code)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wr, err := e.client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: e.queue}, workflows.AnalyticsWorkflow, workflows.AnalyticsInput{})
	if err != nil {
		t.Fatal(err)
	}
	var sum workflows.AnalyticsSummary
	if err := wr.Get(ctx, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Tools["active"] == 0 || sum.Popular == 0 || sum.Gaps["open"] == 0 {
		t.Fatalf("summary: %+v", sum)
	}
	var out struct {
		Source string          `json:"source"`
		At     time.Time       `json:"at"`
		Report json.RawMessage `json:"report"`
	}
	if code := e.do(http.MethodGet, "/api/v1/tools/admin/analytics?source=scheduled", nil, nil, &out); code != http.StatusOK || out.Source != "scheduled" || out.At.IsZero() {
		t.Fatalf("scheduled analytics: HTTP %d %+v", code, out)
	}
	var rep analytics.Report
	if err := json.Unmarshal(out.Report, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Usage.Uses == 0 || rep.Gaps["open"] == 0 || !rep.RunsAvailable || rep.Fulfilments.Total == 0 {
		t.Fatalf("stored report: %+v", rep)
	}
	snap, err := e.store.GetSnapshot(ctx, analytics.SnapshotRanking)
	if err != nil {
		t.Fatal(err)
	}
	var priors analytics.RankingPriors
	if err := json.Unmarshal(snap.Data, &priors); err != nil || priors.Popularity["currency.convert"] != 1 {
		t.Fatalf("ranking priors: %s %v", snap.Data, err)
	}
	if code := e.do(http.MethodGet, "/api/v1/tools/admin/analytics?source=yesterday", nil, nil, nil); code != http.StatusBadRequest {
		t.Fatalf("bad source: HTTP %d", code)
	}
}
