//go:build record

package replay

import (
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/toolsmith/toolsmith/build"
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

// romanProgram is a model's answer for ROMAN_NUMERAL: a program that
// writes a number with the numerals of body, largest first, and its cases.
func romanProgram(t *testing.T, body string) string {
	t.Helper()
	p := build.Program{
		Tool: "to_roman", Description: "Writes a whole number from 1 to 3999 as a Roman numeral.",
		Source: "package main\n\nimport (\n\t\"context\"\n\t\"errors\"\n\t\"strings\"\n)\n\n" +
			"func run(ctx context.Context, in map[string]any, web Web) (any, error) {\n" +
			"\tf, ok := in[\"number\"].(float64)\n\tif !ok || f < 1 || f > 3999 || f != float64(int(f)) {\n" +
			"\t\treturn nil, errors.New(\"number must be a whole number from 1 to 3999\")\n\t}\n\tn := int(f)\n\tvar b strings.Builder\n" +
			"\tfor _, s := range []struct {\n\t\tv int\n\t\tr string\n\t}{" + body + "} {\n" +
			"\t\tfor n >= s.v {\n\t\t\tb.WriteString(s.r)\n\t\t\tn -= s.v\n\t\t}\n\t}\n" +
			"\treturn map[string]any{\"roman\": b.String()}, nil\n}\n",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"number":{"type":"integer","minimum":1,"maximum":3999}},"required":["number"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"roman":{"type":"string"}}}`),
		Tests: []build.TestCase{
			{Name: "year", Input: map[string]any{"number": 1994}, Want: json.RawMessage(`{"roman":"MCMXCIV"}`)},
			{Name: "four", Input: map[string]any{"number": 4}, Want: json.RawMessage(`{"roman":"IV"}`)},
			{Name: "zero", Input: map[string]any{"number": 0}, WantError: "from 1 to 3999"},
		},
		Hosts: []build.Host{},
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The numerals of romanProgram: additive ones write 4 as IIII and fail the
// "year" and "four" cases; subtractive ones pass.
const (
	romanAdditive    = `{1000, "M"}, {500, "D"}, {100, "C"}, {50, "L"}, {10, "X"}, {5, "V"}, {1, "I"}`
	romanSubtractive = `{1000, "M"}, {900, "CM"}, {500, "D"}, {400, "CD"}, {100, "C"}, {90, "XC"}, {50, "L"}, {40, "XL"}, {10, "X"}, {9, "IX"}, {5, "V"}, {4, "IV"}, {1, "I"}`
)

// awaitReview waits until the run's review (the review query an airlock
// review and a build both answer) is pending: a decision sent before the
// build has parked would find no update handler.
func awaitReview(ctx context.Context, c client.Client, id string) error {
	for {
		v, err := c.QueryWorkflow(ctx, id, "", workflows.ReviewQuery)
		if err == nil {
			var st workflows.AirlockState
			if err := v.Get(&st); err != nil {
				return err
			}
			switch st.Status {
			case workflows.AirlockPending:
				return nil
			case workflows.AirlockPreparing:
			default:
				return fmt.Errorf("review of %s is %s, not pending", id, st.Status)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("review of %s never pending: %w (last query error %v)", id, ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

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
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
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
	}, Builds: map[string][]string{
		// A build's first program fails a test, its second passes.
		"ROMAN_NUMERAL": {romanProgram(t, romanAdditive), romanProgram(t, romanSubtractive)},
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
	// Builds write with the scripted model, test in a temp dir and register
	// an approved program in the store through the airlock's files.
	bd := &activities.Build{Model: f.LLM, ModelName: "scripted", WorkDir: t.TempDir(), TestTimeout: 3 * time.Minute,
		Files: files, Registrar: airlock.RegistryRegistrar{Registry: reg}, Gaps: st}
	w := worker.New(c, worker.Deps{Searcher: f.Searcher, Router: f.Router, LLM: f.LLM, Gaps: f.Gaps, Tools: f, Store: st, Usage: f.Usage,
		Reindexer: reg, Retrain: rt, Airlock: al, Build: bd})
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
		// Last, as its approval registers a tool in the store the runs
		// above read.
		{"build_tool.json", workflows.BuildToolWorkflow, []any{workflows.BuildInput{Verb: "ROMAN_NUMERAL", Description: "write a whole number as a roman numeral",
			Inputs: map[string]any{"number": 1994}, Expected: `{"roman": "MCMXCIV"} for 1994`, RequestedBy: "replay",
			Options: workflows.BuildOptions{ReviewTimeout: time.Hour}}},
			&workflows.Decision{Approve: &workflows.ApproveSignal{Reviewer: "replay", Policy: workflows.Policy{RateLimitPerMinute: 60, AllowedGroups: []string{"default"}}}}},
		// The same build under the gap-progress version: the gap is told
		// the build is under way, then that it awaits review.
		{"build_tool_progress.json", workflows.BuildToolWorkflow, []any{workflows.BuildInput{Verb: "ROMAN_NUMERAL", Description: "write a whole number as a roman numeral",
			Inputs: map[string]any{"number": 1994}, Expected: `{"roman": "MCMXCIV"} for 1994`, RequestedBy: "replay",
			Options: workflows.BuildOptions{ReviewTimeout: time.Hour}}},
			&workflows.Decision{Approve: &workflows.ApproveSignal{Reviewer: "replay", Policy: workflows.Policy{RateLimitPerMinute: 60, AllowedGroups: []string{"default"}}}}},
	}
	// setup prepares the store for a run, just before it starts.
	setup := map[string]func() error{
		// The verb's gap, which the approved build closes.
		"build_tool.json": func() error {
			_, err := st.RecordGap(ctx, graph.GapEvent{Verb: "ROMAN_NUMERAL", Description: "write a whole number as a roman numeral", At: time.Unix(0, 0).UTC()})
			return err
		},
		"build_tool_progress.json": func() error {
			_, err := st.RecordGap(ctx, graph.GapEvent{Verb: "ROMAN_NUMERAL", Description: "write a whole number as a roman numeral", At: time.Unix(0, 0).UTC()})
			return err
		},
	}
	for _, r := range runs {
		// A recorded history is evidence that the runs started under older
		// code still replay: keep it unless asked to overwrite.
		if _, err := os.Stat(filepath.Join("..", "testdata", r.file)); err == nil && os.Getenv("TOOLSMITH_RECORD_OVERWRITE") != "1" {
			t.Logf("%s: kept (TOOLSMITH_RECORD_OVERWRITE=1 re-records it)", r.file)
			continue
		}
		if prep := setup[r.file]; prep != nil {
			if err := prep(); err != nil {
				t.Fatalf("%s: %v", r.file, err)
			}
		}
		id := "replay-" + r.file
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.TaskQueue}, r.workflow, r.args...)
		if err != nil {
			t.Fatal(err)
		}
		if r.decide != nil {
			if err := awaitReview(ctx, c, id); err != nil {
				t.Fatal(err)
			}
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
