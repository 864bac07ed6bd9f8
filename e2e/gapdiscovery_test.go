package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/workflows"
)

// TestGapDrivenDiscovery: a verb nothing fulfils recurs; gap-driven
// discovery finds the un-onboarded operation of a registered source that
// fits it and proposes its spec's review with the gap as the reason; a
// person approves; the onboarded tool closes the gap.
func TestGapDrivenDiscovery(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wrapper")
	}
	e := airlockEnv(t, time.Hour)
	specs := serveFile(t, "../codegen/testdata/petstore/spec.yaml")
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"id": "rex-1", "name": "Rex", "species": "dog"}]`))
	}))
	defer api.Close()
	review := e.scan(t, specs.URL+"/pets.yaml")

	// Asked twice, with a bar no tool or definition clears on the spot.
	body := map[string]any{"verb": "LIST_CLINIC_PETS", "description": "list the pets of the clinic", "options": map[string]any{"threshold": 0.99}}
	for i := 0; i < 2; i++ {
		var run verbRun
		if code := e.post("/api/v1/verbs?wait=30s", body, &run); code != http.StatusOK || run.Result.GapRecorded != "store" {
			t.Fatalf("run %d: HTTP %d %+v", i, code, run.Result)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	propose := func(minCount int) workflows.GapDiscoveryReport {
		t.Helper()
		run, err := e.client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: e.queue}, workflows.GapDiscoveryWorkflow,
			workflows.GapDiscoveryInput{MinCount: minCount, MinScore: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		var rep workflows.GapDiscoveryReport
		if err := run.Get(ctx, &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := propose(3); len(rep.Proposals) != 0 {
		t.Fatalf("a gap asked twice is below a bar of three: %+v", rep)
	}
	rep := propose(2)
	if len(rep.Proposals) != 1 || rep.Proposals[0].Verb != "LIST_CLINIC_PETS" || rep.Proposals[0].ReviewID != review || rep.Proposals[0].API == "" {
		t.Fatalf("proposals: %+v (review %s)", rep, review)
	}

	// The review names the gap it was proposed for.
	var pending struct {
		State workflows.AirlockState `json:"state"`
	}
	if code := e.do(http.MethodGet, "/api/v1/tools/pending/"+review, nil, nil, &pending); code != http.StatusOK || !slices.Contains(pending.State.Gaps, "LIST_CLINIC_PETS") {
		t.Fatalf("review: HTTP %d %+v", code, pending.State)
	}

	// A person approves; onboarding closes the gap.
	var approved struct {
		Outcome workflows.AirlockOutcome `json:"outcome"`
	}
	code := e.post("/api/v1/tools/pending/"+review+"/approve?wait=5m", map[string]any{"policy": map[string]any{
		"baseUrl": api.URL + "/v1", "operations": []string{"listPets"},
	}}, &approved)
	if code != http.StatusOK || approved.Outcome.Status != workflows.AirlockOnboarded || !slices.Contains(approved.Outcome.ClosedGaps, "LIST_CLINIC_PETS") {
		t.Fatalf("approve: HTTP %d %+v", code, approved.Outcome)
	}
	closed, err := e.store.ListGaps(ctx, graph.GapQuery{Status: graph.GapClosed})
	if err != nil || len(closed) != 1 || closed[0].Verb != "LIST_CLINIC_PETS" || closed[0].ClosedBy != approved.Outcome.ToolIDs[0] {
		t.Fatalf("closed gaps: %+v %v", closed, err)
	}
}
