package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/analytics"
	apianalytics "github.com/toolsmith/toolsmith/api/analytics"
	"github.com/toolsmith/toolsmith/api/verbs"
	"github.com/toolsmith/toolsmith/workflows"
)

// TestAnalyticsReport runs a verb that substitutes and one nothing can
// fulfil, then reads GET /tools/admin/analytics: the branches and the
// unfulfilled verb come from Temporal's visibility, the catalogue and
// usage from the store.
func TestAnalyticsReport(t *testing.T) {
	e := newEnv(t)
	e.serve(verbs.New(e.client, e.store, verbs.Config{TaskQueue: e.queue, Namespace: server.Namespace()}),
		apianalytics.New(e.store, verbs.Runs{Temporal: e.client, Namespace: server.Namespace()}))
	var run verbRun
	if code := e.post("/api/v1/verbs?wait=30s", convertBody, &run); code != http.StatusOK || run.Result.Branch != workflows.BranchSubstitute {
		t.Fatalf("convert: HTTP %d %+v", code, run.Result)
	}
	if code := e.post("/api/v1/verbs?wait=30s", map[string]any{"verb": "COMPOSE_SYMPHONY", "description": "write a symphony"}, &run); code != http.StatusOK {
		t.Fatalf("compose: HTTP %d", code)
	}
	var r analytics.Report
	eventually(t, 30*time.Second, func() error {
		if code := e.do(http.MethodGet, "/api/v1/tools/admin/analytics?top=50", nil, nil, &r); code != http.StatusOK {
			t.Fatalf("analytics: HTTP %d", code)
		}
		found := false
		for _, u := range r.Unfulfilled {
			found = found || u.Key == "COMPOSE_SYMPHONY"
		}
		if !found || r.Fulfilments.ByBranch[workflows.BranchSubstitute] == 0 {
			return fmt.Errorf("report after both runs: %+v", r)
		}
		return nil
	})
	recent := false
	for _, x := range r.RecentRuns {
		recent = recent || (x.Verb == "COMPOSE_SYMPHONY" && x.WorkflowID != "" && x.RunID != "" && x.Status == "failed")
	}
	if !recent {
		t.Fatalf("recent runs lack COMPOSE_SYMPHONY: %+v", r.RecentRuns)
	}
	if !r.RunsAvailable || r.Tools["active"] == 0 || r.Groups["default"] == 0 || r.Fulfilments.ByStatus["failed"] == 0 {
		t.Fatalf("report: %+v", r)
	}
	if code := e.do(http.MethodGet, "/api/v1/tools/admin/analytics?since=last-week", nil, nil, nil); code != http.StatusBadRequest {
		t.Fatalf("bad since: HTTP %d", code)
	}
}
