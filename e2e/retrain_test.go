package e2e

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/api/ranking"
	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/retrain"
	"github.com/toolsmith/toolsmith/workflows"
)

// TestRetrainOnDemand retrains the ranking through the admin route on the
// in-process Temporal server: a candidate is trained from the demo
// catalogue and seeded served queries, evaluated on the most recent of
// them and promoted or not as the gate says; the version is listed with
// its figures, rolls back through the route, and a restart (a new
// service over the same store) loads whatever is promoted.
func TestRetrainOnDemand(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	svc, err := retrain.New(e.store, hashing.New(embedDim), e.search, retrieval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.stopWorker()
	e.deps.Retrain = svc
	e.serve(ranking.New(svc, e.client, e.queue))

	// Served queries: words the manifests lack, each tool its own.
	page, err := e.store.ListTools(ctx, graph.ListQuery{Limit: 100})
	if err != nil || len(page.Items) < 4 {
		t.Fatalf("catalogue: %d tools, %v", len(page.Items), err)
	}
	tools := page.Items[:4]
	var evs []retrieval.Event
	for i := range 150 {
		tl := tools[i%len(tools)]
		evs = append(evs, retrieval.Event{ToolID: tl.ID, Query: fmt.Sprintf("please do the %s thing for case %d", []string{"zorblax", "quintop", "mervane", "plithic"}[i%4], i), Success: true})
	}
	owner := access.Caller{UserID: "seed", Level: "owner", Groups: []string{access.Wildcard}}
	if err := e.search.RecordEvents(ctx, owner, evs); err != nil {
		t.Fatal(err)
	}

	var list ranking.Versions
	if code := e.do(http.MethodGet, "/api/v1/admin/ranking/versions", nil, nil, &list); code != http.StatusOK || list.Count != 0 || list.Promoted != retrain.Baseline {
		t.Fatalf("versions before any retrain: HTTP %d %+v", code, list)
	}
	if code := e.post("/api/v1/admin/ranking/retrain", map[string]any{"gate": map[string]any{"margin": 2}}, nil); code != http.StatusUnprocessableEntity {
		t.Fatalf("retrain with margin 2: HTTP %d", code)
	}
	// With the worker stopped the first run waits, so the second start is
	// refused deterministically.
	var started ranking.Started
	if code := e.post("/api/v1/admin/ranking/retrain", map[string]any{"options": map[string]any{"epochs": 5}}, &started); code != http.StatusAccepted || started.ID != workflows.RetrainWorkflowID {
		t.Fatalf("retrain: HTTP %d %+v", code, started)
	}
	if code := e.post("/api/v1/admin/ranking/retrain", nil, nil); code != http.StatusConflict {
		t.Fatalf("second retrain while one runs: HTTP %d", code)
	}
	e.startWorker()
	var res workflows.RetrainResult
	if err := e.client.GetWorkflow(ctx, started.ID, started.RunID).Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	t.Logf("retrain: %+v current %+v candidate %+v", res, *res.Current, *res.Candidate)
	if res.Stage != workflows.RetrainDone || res.Counts.Events != 150 || res.Counts.HeldOut != 30 || res.Candidate.N != 30 {
		t.Fatalf("result: %+v", res)
	}
	// The answer's statusUrl reports the same outcome, as does "latest";
	// a run id that is not one is the caller's mistake.
	for _, u := range []string{started.StatusURL, "/api/v1/admin/ranking/retrain/latest"} {
		var got workflows.RetrainResult
		if code := e.do(http.MethodGet, u, nil, nil, &got); code != http.StatusOK || got.Stage != workflows.RetrainDone ||
			got.Version != res.Version || got.Promoted != res.Promoted || got.Reason != res.Reason {
			t.Fatalf("GET %s: HTTP %d %+v; want the run's result %+v", u, code, got, res)
		}
	}
	if code := e.do(http.MethodGet, "/api/v1/admin/ranking/retrain/nope", nil, nil, nil); code != http.StatusBadRequest {
		t.Fatalf("progress of a bogus run id: HTTP %d", code)
	}
	if want, _ := retrain.Gate(res.Gate).Decide(res.Current.Retrain(), res.Candidate.Retrain()); want != res.Promoted {
		t.Fatalf("promoted = %v, the gate says %v", res.Promoted, want)
	}

	if code := e.do(http.MethodGet, "/api/v1/admin/ranking/versions", nil, nil, &list); code != http.StatusOK || list.Count != 1 {
		t.Fatalf("versions: HTTP %d %+v", code, list)
	}
	v := list.Versions[0]
	if v.ID != res.Version || v.Candidate == nil || v.Current == nil || !reflect.DeepEqual(*v.Candidate, res.Candidate.Retrain()) || v.Reason != res.Reason || v.Dim != embedDim {
		t.Fatalf("listed version: %+v", v)
	}
	wantStatus, wantPromoted := retrain.StatusRejected, retrain.Baseline
	if res.Promoted {
		wantStatus, wantPromoted = retrain.StatusPromoted, v.ID
	}
	if v.Status != wantStatus || list.Promoted != wantPromoted {
		t.Fatalf("status %s, promoted %s; want %s, %s", v.Status, list.Promoted, wantStatus, wantPromoted)
	}
	if m := e.search.Model(); (m != nil) != res.Promoted {
		t.Fatalf("live model %+v after promoted=%v", m, res.Promoted)
	}

	// Roll back to the version (an operator may force it), then to none.
	if code := e.post("/api/v1/admin/ranking/versions/"+v.ID+"/rollback", nil, nil); code != http.StatusOK {
		t.Fatalf("rollback to %s: HTTP %d", v.ID, code)
	}
	if m := e.search.Model(); m == nil || m.Version != v.ID || m.Adapter == nil {
		t.Fatalf("live model after rollback to %s: %+v", v.ID, m)
	}
	restart := func() *retrieval.Model {
		t.Helper()
		live := retrieval.New(e.store, hashing.New(embedDim), retrieval.Options{})
		rs, err := retrain.New(e.store, hashing.New(embedDim), live, retrieval.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := rs.Load(ctx); err != nil {
			t.Fatal(err)
		}
		return live.Model()
	}
	if m := restart(); m == nil || m.Version != v.ID {
		t.Fatalf("restart loaded %+v, want %s", m, v.ID)
	}
	// A search still works with the adapter applied.
	if _, _, err := e.search.Rank(ctx, retrieval.Query{Text: "please do the zorblax thing", Caller: owner}); err != nil {
		t.Fatal(err)
	}
	if code := e.post("/api/v1/admin/ranking/versions/none/rollback", nil, nil); code != http.StatusOK {
		t.Fatalf("rollback to none: HTTP %d", code)
	}
	if e.search.Model() != nil || restart() != nil {
		t.Fatal("a model applies after rolling back to none")
	}
	if code := e.do(http.MethodGet, "/api/v1/admin/ranking/versions", nil, nil, &list); code != http.StatusOK || list.Promoted != retrain.Baseline || list.Versions[0].Status != retrain.StatusRolledBack {
		t.Fatalf("versions after rollback: HTTP %d %+v", code, list)
	}
	if code := e.post("/api/v1/admin/ranking/versions/rv-nope/rollback", nil, nil); code != http.StatusNotFound {
		t.Fatalf("rollback to a missing version: HTTP %d", code)
	}
}

// TestRetrainSchedule: the schedule the server ensures at start exists,
// runs RetrainWorkflow on the given cadence, and ensuring it again
// updates it in place.
func TestRetrainSchedule(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := ranking.EnsureRetrainSchedule(ctx, e.client, 24*time.Hour, e.queue); err != nil {
		t.Fatal(err)
	}
	h := e.client.ScheduleClient().GetHandle(ctx, ranking.RetrainScheduleID)
	t.Cleanup(func() { _ = h.Delete(context.Background()) })
	describe := func() (time.Duration, string) {
		t.Helper()
		d, err := h.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a, ok := d.Schedule.Action.(*client.ScheduleWorkflowAction)
		if !ok || len(d.Schedule.Spec.Intervals) != 1 {
			t.Fatalf("schedule: %+v", d.Schedule)
		}
		name, _ := a.Workflow.(string)
		return d.Schedule.Spec.Intervals[0].Every, name
	}
	if every, wf := describe(); every != 24*time.Hour || wf != "RetrainWorkflow" {
		t.Fatalf("schedule every %s runs %q", every, wf)
	}
	if err := ranking.EnsureRetrainSchedule(ctx, e.client, 6*time.Hour, e.queue); err != nil {
		t.Fatal(err)
	}
	if every, _ := describe(); every != 6*time.Hour {
		t.Fatalf("after update: every %s", every)
	}
}
