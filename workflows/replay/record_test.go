//go:build record

package replay

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/internal/temporalserver"
	"github.com/toolsmith/toolsmith/registry"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/retrain"
	"github.com/toolsmith/toolsmith/worker"
	"github.com/toolsmith/toolsmith/workflows"
	"github.com/toolsmith/toolsmith/workflows/workflowstest"
)

const tripPlan = `{"steps":[
 {"id":"budget","verb":"CONVERT_CURRENCY","inputs":{"amount":"$inputs.budget","from":"$inputs.currency","to":"EUR"}},
 {"id":"distance","verb":"MEASURE_DISTANCE_IN_MILES","inputs":{"value":"$inputs.distance_km","from_unit":"km","to_unit":"mi"}},
 {"id":"yen","verb":"CONVERT_CURRENCY","inputs":{"amount":"$steps.budget.output.converted","from":"EUR","to":"JPY"}}]}`

// serveSpec serves the petstore spec, made distinct by n trailing
// newlines (a spec's hash names its review).
func serveSpec(t *testing.T, n int) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "codegen", "testdata", "petstore", "spec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, strings.Repeat("\n", n)...)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(data) }))
	t.Cleanup(srv.Close)
	return srv.URL + "/pets.yaml"
}

func TestRecord(t *testing.T) {
	if os.Getenv("TOOLSMITH_RECORD_HISTORY") != "1" {
		t.Skip("set TOOLSMITH_RECORD_HISTORY=1 to re-record workflows/testdata/*.json")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
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
	f.Hit("convert currency", "currency.convert", 0.81)
	f.Hit("plan trip budget", "currency.convert", 0.35)
	f.Hit("measure distance in miles", "units.convert", 0.77)
	f.Hit("reserve lutece table", "currency.convert", 0.12)
	// Far from the description but with the score lead of usage evidence:
	// the default rule's evidence clause (version default-substitute-rule 1).
	f.ScoredHit("exchange money", "currency.convert", 0.55, 31)
	f.ScoredHit("exchange money", "units.convert", 0.41, 5)
	// An undecided ranking the configured model judges (version
	// llm-judge 1): it picks the second candidate.
	f.ScoredHit("change money", "currency.rates", 0.46, 1.2)
	f.ScoredHit("change money", "currency.convert", 0.45, 1.1)
	f.LLM = &workflowstest.ScriptedLLM{Answers: map[string]string{
		"PLAN_TRIP_BUDGET":     tripPlan,
		"RESERVE_LUTECE_TABLE": `{"steps":[],"reason":"no restaurant booking verb is known"}`,
	}, Judgements: map[string]string{
		"CHANGE_MONEY": `{"tool":"currency.convert","reason":"changing money between currencies is converting it"}`,
	}}
	// An empty store for the analytics run; usage stays with the fixture's
	// log, as it did before the store was here.
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "graph.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The demo catalogue in the store, for the reindex to re-embed, and a
	// retraining service over it that has no served queries to learn from.
	emb := hashing.New(64)
	reg := registry.New(st, emb)
	for _, id := range slices.Sorted(maps.Keys(f.Tools)) {
		if _, err := reg.Register(ctx, registry.Request{Manifest: f.Tools[id].Manifest}); err != nil {
			t.Fatalf("register %s: %v", id, err)
		}
	}
	rt, err := retrain.New(st, emb, retrieval.New(st, emb, retrieval.Options{}), retrieval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The airlock over the same store: a source to scan, and another whose
	// spec is scanned here for a review to be rejected.
	files := &airlock.Files{Root: filepath.Join(t.TempDir(), "airlock")}
	scanner := &airlock.Scanner{Fetcher: &airlock.Fetcher{}, Files: files, Definitions: st, Embedder: emb}
	al := &activities.Airlock{Scanner: scanner, Onboarding: &airlock.Onboarding{}, Files: files, Definitions: st, Health: &airlock.HealthChecker{Files: files},
		Reviews: worker.Reviews(c, workflows.TaskQueue, time.Hour)}
	scanned, rejected := serveSpec(t, 1), serveSpec(t, 2)
	for id, loc := range map[string]string{"scanned": scanned, "rejected": rejected} {
		if err := st.PutSource(ctx, graph.Source{ID: id, Type: "openapi", Location: loc, CreatedAt: time.Unix(0, 0).UTC()}); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := scanner.Scan(ctx, "rejected")
	if err != nil || len(rep.New) != 1 {
		t.Fatalf("scan of the spec to reject: %+v %v", rep, err)
	}
	w := worker.New(c, worker.Deps{Searcher: f.Searcher, Router: f.Router, LLM: f.LLM, Gaps: f.Gaps, Tools: f, Store: st, Usage: f.Usage,
		Reindexer: reg, Retrain: rt, Airlock: al})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	runs := []struct {
		file     string
		workflow any
		args     []any
		// decide, when set, is the decision sent to the run once started.
		decide *workflows.Decision
	}{
		{"substitute.json", workflows.NovelVerbWorkflow, []any{workflows.NovelVerbInput{Verb: "CONVERT_CURRENCY", Description: "change money", Inputs: map[string]any{"amount": 100, "from": "USD", "to": "EUR"}}}, nil},
		{"decompose_child.json", workflows.NovelVerbWorkflow, []any{workflows.NovelVerbInput{Verb: "PLAN_TRIP_BUDGET", Inputs: map[string]any{"budget": 1000, "currency": "USD", "distance_km": 42.195}}}, nil},
		{"no_capability.json", workflows.NovelVerbWorkflow, []any{workflows.NovelVerbInput{Verb: "RESERVE_LUTECE_TABLE", Description: "book dinner at Lutèce"}}, nil},
		{"schema_mismatch.json", workflows.NovelVerbWorkflow, []any{workflows.NovelVerbInput{Verb: "CONVERT_CURRENCY", Inputs: map[string]any{"amount": "ten", "from": "USD", "to": "EUR"}}}, nil},
		{"substitute_evidence.json", workflows.NovelVerbWorkflow, []any{workflows.NovelVerbInput{Verb: "EXCHANGE_MONEY", Inputs: map[string]any{"amount": 100, "from": "USD", "to": "EUR"}}}, nil},
		{"judge_pick.json", workflows.NovelVerbWorkflow, []any{workflows.NovelVerbInput{Verb: "CHANGE_MONEY", Inputs: map[string]any{"amount": 100, "from": "USD", "to": "EUR"}}}, nil},
		{"execute_tool.json", workflows.ExecuteToolWorkflow, []any{workflows.ExecuteToolInput{ToolID: "units.convert", Inputs: map[string]any{"value": 26.2, "from_unit": "mi", "to_unit": "km"}}}, nil},
		{"execute_tool_dry_run.json", workflows.ExecuteToolWorkflow, []any{workflows.ExecuteToolInput{ToolID: "currency.convert", Inputs: map[string]any{"amount": 100, "from": "USD", "to": "EUR"}, DryRun: true}}, nil},
		{"refresh_modules.json", workflows.RefreshModulesWorkflow, nil, nil},
		{"gap_discovery.json", workflows.GapDiscoveryWorkflow, []any{workflows.GapDiscoveryInput{MinCount: 2, MinScore: 0.5}}, nil},
		{"analytics.json", workflows.AnalyticsWorkflow, []any{workflows.AnalyticsInput{}}, nil},
		{"reindex.json", workflows.ReindexWorkflow, []any{workflows.ReindexInput{BatchSize: 4}}, nil},
		{"retrain_no_events.json", workflows.RetrainWorkflow, []any{workflows.RetrainInput{Gate: workflows.RetrainGate{Margin: 0.02}}}, nil},
		{"health_check.json", workflows.HealthCheckWorkflow, nil, nil},
		{"scan_sources.json", workflows.ScanSourcesWorkflow, []any{workflows.ScanInput{SourceIDs: []string{"scanned"}}}, nil},
		{"airlock_reject.json", workflows.AirlockWorkflow, []any{workflows.AirlockInput{SpecHash: rep.New[0], SourceID: "rejected", Location: rejected, ReviewTimeout: time.Hour}},
			&workflows.Decision{Reject: &workflows.RejectSignal{Reviewer: "replay", Reason: "not this API"}}},
	}
	for _, r := range runs {
		// A recorded history is evidence that the runs started under older
		// code still replay: keep it unless asked to overwrite.
		if _, err := os.Stat(filepath.Join("..", "testdata", r.file)); err == nil && os.Getenv("TOOLSMITH_RECORD_OVERWRITE") != "1" {
			t.Logf("%s: kept (TOOLSMITH_RECORD_OVERWRITE=1 re-records it)", r.file)
			continue
		}
		id := "replay-" + r.file
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.TaskQueue}, r.workflow, r.args...)
		if err != nil {
			t.Fatal(err)
		}
		if r.decide != nil {
			h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: workflows.UpdateDecide,
				Args: []any{*r.decide}, WaitForStage: client.WorkflowUpdateStageCompleted})
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Get(ctx, nil); err != nil {
				t.Fatal(err)
			}
		}
		var res any
		err = run.Get(ctx, &res)
		t.Logf("%s: result %v err %v", r.file, res, err)
		hist := &historypb.History{}
		it := c.GetWorkflowHistory(ctx, id, run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			hist.Events = append(hist.Events, ev)
		}
		b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(hist)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "testdata", r.file), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
