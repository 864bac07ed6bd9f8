package verbs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/api/httpx/httpxtest"
	"github.com/toolsmith/toolsmith/api/verbs"
	"github.com/toolsmith/toolsmith/fulfil"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/workflows"
)

// fakeRun is a client.WorkflowRun whose outcome the test sets.
type fakeRun struct {
	id, runID string
	result    any
	err       error
	block     bool // Get waits for ctx
}

func (r *fakeRun) GetID() string                  { return r.id }
func (r *fakeRun) GetRunID() string               { return r.runID }
func (r *fakeRun) GetFirstExecutionRunID() string { return r.runID }
func (r *fakeRun) GetWithOptions(ctx context.Context, v any, _ client.WorkflowRunGetOptions) error {
	return r.Get(ctx, v)
}
func (r *fakeRun) Get(ctx context.Context, v any) error {
	if r.block {
		<-ctx.Done()
		return ctx.Err()
	}
	if r.err != nil {
		return r.err
	}
	return roundTrip(r.result, v)
}

func roundTrip(from, to any) error {
	b, err := json.Marshal(from)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, to)
}

type fakeValue struct{ v any }

func (f fakeValue) HasValue() bool    { return f.v != nil }
func (f fakeValue) Get(ptr any) error { return roundTrip(f.v, ptr) }

// fakeTemporal is a verbs.Starter recording what the handlers ask for.
type fakeTemporal struct {
	startErr  error
	run       *fakeRun
	started   []client.StartWorkflowOptions
	args      []any
	desc      *workflowservice.DescribeWorkflowExecutionResponse
	descErr   error
	progress  any
	getCalled string
}

func (f *fakeTemporal) ExecuteWorkflow(_ context.Context, o client.StartWorkflowOptions, _ any, args ...any) (client.WorkflowRun, error) {
	f.started = append(f.started, o)
	f.args = append(f.args, args...)
	if f.startErr != nil {
		return nil, f.startErr
	}
	f.run.id = o.ID
	return f.run, nil
}

func (f *fakeTemporal) GetWorkflow(_ context.Context, id, runID string) client.WorkflowRun {
	f.getCalled = id
	f.run.id = id
	return f.run
}

func (f *fakeTemporal) DescribeWorkflowExecution(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	if f.desc == nil && f.descErr == nil && len(f.started) > 0 {
		// A keyed start refused as already started: the run is the one
		// the last start named, with its memo, completed.
		o := f.started[len(f.started)-1]
		memo := map[string]*commonpb.Payload{}
		for k, v := range o.Memo {
			p, err := converter.GetDefaultDataConverter().ToPayload(v)
			if err != nil {
				return nil, err
			}
			memo[k] = p
		}
		return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
			Execution: &commonpb.WorkflowExecution{WorkflowId: o.ID, RunId: f.run.runID}, Memo: &commonpb.Memo{Fields: memo},
			Status: enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED}}, nil
	}
	return f.desc, f.descErr
}

func (f *fakeTemporal) QueryWorkflow(_ context.Context, _, runID, q string, _ ...any) (converter.EncodedValue, error) {
	// Temporal refuses a run id that is not a UUID.
	if _, err := uuid.Parse(runID); runID != "" && err != nil {
		return nil, serviceerror.NewInvalidArgument("Invalid RunId.")
	}
	if q != workflows.ProgressQuery && q != workflows.ReindexQuery {
		return nil, errors.New("unknown query")
	}
	return fakeValue{f.progress}, nil
}

type fakeTools map[string]graph.Tool

func (f fakeTools) GetTool(_ context.Context, id string) (graph.Tool, error) {
	t, ok := f[id]
	if !ok {
		return graph.Tool{}, fault.ErrNotFound
	}
	return t, nil
}

type response struct {
	Header http.Header `json:"-"`
	Status string      `json:"status"`
	Data   struct {
		verbs.Run
		Result json.RawMessage `json:"result"`
	} `json:"data"`
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Fields  []struct {
			Path string `json:"path"`
		} `json:"fields"`
	} `json:"error"`
}

func serve(t *testing.T, f *fakeTemporal, tools verbs.ToolGetter, method, path, body string, hdr map[string]string) (int, response) {
	t.Helper()
	gin.SetMode(gin.TestMode)
	r := gin.New()
	r.Use(httpxtest.HeaderIdentity())
	verbs.New(f, tools, verbs.Config{UIBaseURL: "http://ui:8233/"}).Mount(r.Group("/api/v1"))
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	var resp response
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatalf("%s %s: body %q: %v", method, path, rec.Body.String(), err)
	}
	resp.Header = rec.Header()
	return rec.Code, resp
}

func TestStartVerbAccepted(t *testing.T) {
	f := &fakeTemporal{run: &fakeRun{runID: "run-1"}}
	code, resp := serve(t, f, nil, http.MethodPost, "/api/v1/verbs",
		`{"verb":"CONVERT_CURRENCY","description":"money","inputs":{"amount":100},"context":"trip","options":{"threshold":0.7,"maxDepth":2,"dryRun":true}}`,
		map[string]string{"X-Test-User": "u1", "X-Tool-Groups": "finance"})
	if code != http.StatusAccepted || resp.Data.Status != workflows.StatusRunning {
		t.Fatalf("HTTP %d status %q", code, resp.Data.Status)
	}
	o := f.started[0]
	// 128 random bits: a run id cannot be guessed.
	if !strings.HasPrefix(o.ID, "verb-CONVERT_CURRENCY-") || len(o.ID) != len("verb-CONVERT_CURRENCY-")+32 {
		t.Errorf("workflow ID = %q", o.ID)
	}
	if o.Memo[fulfil.MemoOwner] != "u1" {
		t.Errorf("memo = %v, want the owner u1", o.Memo)
	}
	if o.TaskQueue != workflows.TaskQueue {
		t.Errorf("task queue = %q", o.TaskQueue)
	}
	if v, ok := o.TypedSearchAttributes.GetKeyword(workflows.SAVerb); !ok || v != "CONVERT_CURRENCY" {
		t.Errorf("ToolsmithVerb at start = %q, %v", v, ok)
	}
	in := f.args[0].(workflows.NovelVerbInput)
	if in.Caller.UserID != "u1" || len(in.Caller.Groups) != 1 || in.Caller.Groups[0] != "finance" {
		t.Errorf("caller = %+v", in.Caller)
	}
	if in.Options.Threshold != 0.7 || in.Options.MaxDepth != 2 || !in.Options.DryRun || in.Context != "trip" || in.Inputs["amount"] != float64(100) {
		t.Errorf("input = %+v", in)
	}
	want := "http://ui:8233/namespaces/default/workflows/" + o.ID + "/run-1/history"
	if resp.Data.WorkflowID != o.ID || resp.Data.RunID != "run-1" || resp.Data.UIURL != want {
		t.Errorf("response = %+v, want uiUrl %s", resp.Data.Run, want)
	}
}

func TestStartVerbWait(t *testing.T) {
	done := workflows.NovelVerbResult{Verb: "CONVERT_CURRENCY", Branch: workflows.BranchSubstitute, Tools: []string{"currency.convert"}}
	failure := temporal.NewNonRetryableApplicationError("no language model is configured", activities.ErrTypeLLMUnavailable, nil,
		workflows.NovelVerbResult{Verb: "X_Y", Branch: workflows.BranchDecompose})
	tests := []struct {
		name       string
		run        *fakeRun
		path       string
		wantCode   int
		wantStatus string
		wantType   string
		wantBranch string
	}{
		{"completed", &fakeRun{result: done}, "/api/v1/verbs?wait=1s", 200, "completed", "", "substitute"},
		{"still running", &fakeRun{block: true}, "/api/v1/verbs?wait=20ms", 202, "running", "", ""},
		{"no wait", &fakeRun{result: done}, "/api/v1/verbs", 202, "running", "", ""},
		// The server's long poll can time out a moment before the caller's
		// own deadline: still running, not failed.
		{"poll deadline", &fakeRun{err: serviceerror.NewDeadlineExceeded("context deadline exceeded")}, "/api/v1/verbs?wait=1s", 202, "running", "", ""},
		{"failed with details", &fakeRun{err: failure}, "/api/v1/verbs?wait=1s", 200, "failed", activities.ErrTypeLLMUnavailable, "decompose"},
		{"terminated", &fakeRun{err: &temporal.TerminatedError{}}, "/api/v1/verbs?wait=1s", 200, "terminated", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeTemporal{run: tc.run}
			code, resp := serve(t, f, nil, http.MethodPost, tc.path, `{"verb":"CONVERT_CURRENCY"}`, nil)
			if code != tc.wantCode || resp.Data.Status != tc.wantStatus || resp.Data.ErrorType != tc.wantType {
				t.Fatalf("HTTP %d status %q type %q; want %d %q %q", code, resp.Data.Status, resp.Data.ErrorType, tc.wantCode, tc.wantStatus, tc.wantType)
			}
			// A finished run's outcome is visible at a glance: the header and
			// succeeded, not only data.status.
			if got := resp.Header.Get(verbs.RunStatusHeader); got != tc.wantStatus || resp.Data.Succeeded != (tc.wantStatus == "completed") {
				t.Errorf("%s %q succeeded %v for status %q", verbs.RunStatusHeader, got, resp.Data.Succeeded, tc.wantStatus)
			}
			var res workflows.NovelVerbResult
			if len(resp.Data.Result) > 0 {
				if err := json.Unmarshal(resp.Data.Result, &res); err != nil {
					t.Fatal(err)
				}
			}
			if res.Branch != tc.wantBranch {
				t.Errorf("result branch = %q, want %q", res.Branch, tc.wantBranch)
			}
		})
	}
}

func TestStartVerbValidation(t *testing.T) {
	tests := []struct {
		name, path, body string
		wantCode         int
		wantField        string
	}{
		{"bad wait", "/api/v1/verbs?wait=forever", `{"verb":"A_B"}`, 400, "wait"},
		{"negative wait", "/api/v1/verbs?wait=-1s", `{"verb":"A_B"}`, 400, "wait"},
		{"wait over max", "/api/v1/verbs?wait=121s", `{"verb":"A_B"}`, 400, "wait"},
		{"empty body", "/api/v1/verbs", ``, 400, "body"},
		{"unknown field", "/api/v1/verbs", `{"verb":"A_B","extra":1}`, 400, "extra"},
		{"wrong type", "/api/v1/verbs", `{"verb":7}`, 400, "verb"},
		{"no verb", "/api/v1/verbs", `{}`, 422, "verb"},
		{"lower verb", "/api/v1/verbs", `{"verb":"convert"}`, 422, "verb"},
		{"long verb", "/api/v1/verbs", `{"verb":"` + strings.Repeat("A", 65) + `"}`, 422, "verb"},
		{"threshold", "/api/v1/verbs", `{"verb":"A_B","options":{"threshold":-0.1}}`, 422, "options.threshold"},
		{"confidence", "/api/v1/verbs", `{"verb":"A_B","options":{"confidence":1}}`, 422, "options.confidence"},
		{"margin", "/api/v1/verbs", `{"verb":"A_B","options":{"margin":2}}`, 422, "options.margin"},
		{"score margin", "/api/v1/verbs", `{"verb":"A_B","options":{"scoreMargin":-1}}`, 422, "options.scoreMargin"},
		{"evidence margin", "/api/v1/verbs", `{"verb":"A_B","options":{"evidenceMargin":-1}}`, 422, "options.evidenceMargin"},
		{"depth", "/api/v1/verbs", `{"verb":"A_B","options":{"maxDepth":11}}`, 422, "options.maxDepth"},
		{"limit", "/api/v1/verbs", `{"verb":"A_B","options":{"searchLimit":101}}`, 422, "options.searchLimit"},
		{"long description", "/api/v1/verbs", `{"verb":"A_B","description":"` + strings.Repeat("d", fulfil.MaxVerbTextBytes+1) + `"}`, 422, "description"},
		{"long context", "/api/v1/verbs", `{"verb":"A_B","context":"` + strings.Repeat("c", fulfil.MaxVerbTextBytes+1) + `"}`, 422, "context"},
		{"repeated verb", "/api/v1/verbs", `{"verb":"A_B","verb":"C_D"}`, 400, "verb"},
		{"verb in two cases", "/api/v1/verbs", `{"verb":"A_B","VERB":"C_D"}`, 400, "VERB"},
		{"repeated input", "/api/v1/verbs", `{"verb":"A_B","inputs":{"amount":1,"amount":500}}`, 400, "inputs.amount"},
		{"description not UTF-8", "/api/v1/verbs", "{\"verb\":\"A_B\",\"description\":\"\xff\"}", 400, "description"},
		{"huge inputs", "/api/v1/verbs", `{"verb":"A_B","inputs":{"x":"` + strings.Repeat("i", fulfil.MaxInputsBytes) + `"}}`, 422, "inputs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeTemporal{run: &fakeRun{}}
			code, resp := serve(t, f, nil, http.MethodPost, tc.path, tc.body, nil)
			if code != tc.wantCode {
				t.Errorf("HTTP %d, want %d", code, tc.wantCode)
			}
			if len(resp.Error.Fields) == 0 || resp.Error.Fields[0].Path != tc.wantField {
				t.Errorf("fields = %+v, want %q", resp.Error.Fields, tc.wantField)
			}
			if len(f.started) != 0 {
				t.Errorf("a workflow was started for an invalid request")
			}
		})
	}
}

// TestStartVerbRule: the substitution rule comes as a whole. A request with
// none of its fields gets the server's calibrated rule; one with any gets
// what it set, the unset margins off and, without a threshold, the
// server's threshold.
func TestStartVerbRule(t *testing.T) {
	def := retrieval.SubstituteRule{Threshold: 0.67, ScoreMargin: 4.25, EvidenceMargin: 22}
	for _, tc := range []struct {
		name, options string
		want          retrieval.SubstituteRule
	}{
		{"none", `{}`, def},
		{"only other options", `{"maxDepth":2}`, def},
		{"threshold", `{"threshold":0.8}`, retrieval.SubstituteRule{Threshold: 0.8}},
		{"a margin", `{"scoreMargin":2}`, retrieval.SubstituteRule{Threshold: 0.67, ScoreMargin: 2}},
		{"all", `{"threshold":0.5,"margin":0.1,"scoreMargin":1,"evidenceMargin":9}`, retrieval.SubstituteRule{Threshold: 0.5, Margin: 0.1, ScoreMargin: 1, EvidenceMargin: 9}},
		{"a confidence", `{"confidence":0.7}`, retrieval.SubstituteRule{Confidence: 0.7}},
		{"a confidence and a margin", `{"confidence":0.7,"margin":0.1}`, retrieval.SubstituteRule{Confidence: 0.7, Margin: 0.1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gin.SetMode(gin.TestMode)
			r := gin.New()
			r.Use(httpxtest.HeaderIdentity())
			f := &fakeTemporal{run: &fakeRun{runID: "run-1"}}
			verbs.New(f, nil, verbs.Config{DefaultRule: def}).Mount(r.Group("/api/v1"))
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api/v1/verbs", strings.NewReader(`{"verb":"A_B","options":`+tc.options+`}`)))
			if rec.Code != http.StatusAccepted || len(f.args) != 1 {
				t.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
			}
			if got := f.args[0].(workflows.NovelVerbInput).Options.Rule(); got != tc.want {
				t.Fatalf("rule = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestStartVerbTemporalErrors(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{serviceerror.NewUnavailable("down"), http.StatusServiceUnavailable},
		{context.DeadlineExceeded, http.StatusServiceUnavailable},
		{errors.New("boom"), http.StatusInternalServerError},
	}
	for _, tc := range tests {
		f := &fakeTemporal{startErr: tc.err, run: &fakeRun{}}
		if code, _ := serve(t, f, nil, http.MethodPost, "/api/v1/verbs", `{"verb":"A_B"}`, nil); code != tc.want {
			t.Errorf("start error %v: HTTP %d, want %d", tc.err, code, tc.want)
		}
	}
}

// runR9 is the run id of the described runs (Temporal's run ids are UUIDs).
const runR9 = "9e0c2a5e-5f4b-4c1e-9d7a-3b2f1a0c9e99"

// describe is a run started by u1.
func describe(typ string, status enumspb.WorkflowExecutionStatus) *workflowservice.DescribeWorkflowExecutionResponse {
	return describeOwned(typ, status, "u1")
}

// describeOwned is a run whose memo names owner ("" leaves the memo out, as
// for runs started before owners were recorded).
func describeOwned(typ string, status enumspb.WorkflowExecutionStatus, owner string) *workflowservice.DescribeWorkflowExecutionResponse {
	info := &workflowpb.WorkflowExecutionInfo{
		Execution: &commonpb.WorkflowExecution{WorkflowId: "verb-A_B-1", RunId: runR9},
		Type:      &commonpb.WorkflowType{Name: typ},
		Status:    status,
	}
	if owner != "" {
		p, err := converter.GetDefaultDataConverter().ToPayload(owner)
		if err != nil {
			panic(err)
		}
		info.Memo = &commonpb.Memo{Fields: map[string]*commonpb.Payload{fulfil.MemoOwner: p}}
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: info}
}

var asU1 = map[string]string{"X-Test-User": "u1"}

func TestGetVerb(t *testing.T) {
	t.Run("running with progress", func(t *testing.T) {
		f := &fakeTemporal{run: &fakeRun{}, desc: describe("NovelVerbWorkflow", enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING),
			progress: workflows.Progress{Verb: "A_B", Status: "running", Stage: "decompose", StepsTotal: 3, StepsDone: 1}}
		code, resp := serve(t, f, nil, http.MethodGet, "/api/v1/verbs/verb-A_B-1", "", asU1)
		if code != 200 || resp.Data.Status != "running" || resp.Data.RunID != runR9 {
			t.Fatalf("HTTP %d %+v", code, resp.Data.Run)
		}
		if p := resp.Data.Progress; p == nil || p.Stage != "decompose" || p.StepsDone != 1 {
			t.Errorf("progress = %+v", p)
		}
		if f.getCalled != "" {
			t.Errorf("a running workflow's result was awaited")
		}
	})
	t.Run("completed", func(t *testing.T) {
		f := &fakeTemporal{run: &fakeRun{result: workflows.NovelVerbResult{Branch: "substitute"}},
			desc: describe("NovelVerbWorkflow", enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED)}
		code, resp := serve(t, f, nil, http.MethodGet, "/api/v1/verbs/verb-A_B-1", "", asU1)
		if code != 200 || resp.Data.Status != "completed" || !strings.Contains(string(resp.Data.Result), `"branch":"substitute"`) {
			t.Fatalf("HTTP %d %+v %s", code, resp.Data.Run, resp.Data.Result)
		}
	})
	t.Run("not found", func(t *testing.T) {
		f := &fakeTemporal{run: &fakeRun{}, descErr: serviceerror.NewNotFound("no such workflow")}
		if code, _ := serve(t, f, nil, http.MethodGet, "/api/v1/verbs/nope", "", asU1); code != 404 {
			t.Errorf("HTTP %d, want 404", code)
		}
	})
	t.Run("other workflow type", func(t *testing.T) {
		f := &fakeTemporal{run: &fakeRun{}, desc: describe("RefreshModulesWorkflow", enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED)}
		if code, _ := serve(t, f, nil, http.MethodGet, "/api/v1/verbs/modules-refresh-1", "", asU1); code != 404 {
			t.Errorf("HTTP %d, want 404", code)
		}
	})
	// An unknown id, a run of another workflow type and another caller's
	// run answer the same 404 with the same message: anything else is an
	// existence and type oracle.
	t.Run("one answer for unknown, other type and other caller", func(t *testing.T) {
		cases := map[string]*fakeTemporal{
			"unknown":      {run: &fakeRun{}, descErr: serviceerror.NewNotFound("workflow not found for ID: verb-A_B-1")},
			"other type":   {run: &fakeRun{}, desc: describe("ExecuteToolWorkflow", enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED)},
			"other caller": {run: &fakeRun{}, desc: describeOwned("NovelVerbWorkflow", enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, "u2")},
			"airlock run":  {run: &fakeRun{}, desc: describe("AirlockWorkflow", enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING)},
		}
		var first string
		for name, f := range cases {
			code, resp := serve(t, f, nil, http.MethodGet, "/api/v1/verbs/verb-A_B-1", "", asU1)
			got := fmt.Sprintf("%d %s %s", code, resp.Error.Code, resp.Error.Message)
			if code != 404 || strings.Contains(resp.Error.Message, "Workflow") || strings.Contains(resp.Error.Message, "workflow not found") {
				t.Errorf("%s: %s", name, got)
			}
			if first == "" {
				first = got
			} else if got != first {
				t.Errorf("%s: %s, another case: %s", name, got, first)
			}
		}
	})
	// A run belongs to its caller: another caller's run answers 404 like
	// an unknown id, inputs and outputs included;
	// admins read every run.
	for _, tc := range []struct {
		name, owner string
		hdr         map[string]string
		want        int
	}{
		{"another caller", "u1", map[string]string{"X-Test-User": "u2"}, 404},
		{"no owner recorded", "", asU1, 404},
		{"anonymous", "u1", nil, 404},
		{"gateway end user of another", "gateway:kgw:ana", asU1, 404},
		{"admin reads another's", "u1", map[string]string{"X-Test-User": "ops", "X-Test-Level": "admin"}, 200},
		{"admin reads an ownerless run", "", map[string]string{"X-Test-User": "ops", "X-Test-Level": "admin"}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeTemporal{run: &fakeRun{result: workflows.NovelVerbResult{Branch: "substitute", Verb: "SECRET"}},
				desc: describeOwned("NovelVerbWorkflow", enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, tc.owner)}
			code, resp := serve(t, f, nil, http.MethodGet, "/api/v1/verbs/verb-A_B-1", "", tc.hdr)
			if code != tc.want {
				t.Fatalf("HTTP %d, want %d", code, tc.want)
			}
			if tc.want == 404 && (f.getCalled != "" || strings.Contains(string(resp.Data.Result), "SECRET")) {
				t.Errorf("another caller's run outcome was read")
			}
		})
	}
}

func TestExecuteTool(t *testing.T) {
	tools := fakeTools{
		"currency.convert": {ToolSummary: graph.ToolSummary{ID: "currency.convert", Status: graph.StatusActive, Groups: []string{"default"}}},
		"old.tool":         {ToolSummary: graph.ToolSummary{ID: "old.tool", Status: graph.StatusDisabled}},
	}
	out := workflows.ExecuteToolResult{ToolID: "currency.convert", Output: map[string]any{"converted": 92.0}}
	body := `{"inputs":{"amount":100}}`

	f := &fakeTemporal{run: &fakeRun{runID: "r1", result: out}}
	code, resp := serve(t, f, tools, http.MethodPost, "/api/v1/tools/currency.convert/execute", body, nil)
	if code != 200 || resp.Data.Status != "completed" || !strings.Contains(string(resp.Data.Result), `"converted":92`) {
		t.Fatalf("HTTP %d %+v %s", code, resp.Data.Run, resp.Data.Result)
	}
	if v, _ := f.started[0].TypedSearchAttributes.GetKeyword(workflows.SAToolID); v != "currency.convert" {
		t.Errorf("ToolsmithToolId at start = %q", v)
	}
	if in := f.args[0].(workflows.ExecuteToolInput); in.ToolID != "currency.convert" || in.Inputs["amount"] != float64(100) {
		t.Errorf("input = %+v", in)
	}

	// Idempotency-Key: a fixed workflow ID per caller and key, and an
	// already-started run is joined instead of failing.
	idem := func(user, key string) (int, string, string) {
		f := &fakeTemporal{run: &fakeRun{runID: "r1", result: out}, startErr: serviceerror.NewWorkflowExecutionAlreadyStarted("started", "req", "r1")}
		hdr := map[string]string{"Idempotency-Key": key}
		if user != "" {
			hdr["X-Test-User"] = user
		}
		code, _ := serve(t, f, tools, http.MethodPost, "/api/v1/tools/currency.convert/execute", body, hdr)
		id := ""
		if len(f.started) > 0 {
			id = f.started[0].ID
			if f.started[0].WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE {
				t.Errorf("reuse policy = %s", f.started[0].WorkflowIDReusePolicy)
			}
		}
		return code, id, f.getCalled
	}
	code, id1, joined := idem("u1", "k-1")
	if code != 200 || !strings.HasPrefix(id1, "key-") || joined != id1 {
		t.Errorf("HTTP %d, started %q, joined %q", code, id1, joined)
	}
	if _, again, _ := idem("u1", "k-1"); again != id1 {
		t.Errorf("the same caller and key: workflow %q, then %q", id1, again)
	}
	// Keys are per caller: another caller's same key is
	// another workflow, so it can neither read nor pre-claim u1's run.
	if _, id2, _ := idem("u2", "k-1"); id2 == id1 || id2 == "" {
		t.Errorf("two callers' key k-1 meet in workflow %q", id2)
	}
	if strings.Contains(id1, "k-1") {
		t.Errorf("the workflow ID %q shows the key", id1)
	}
	// Anonymous callers cannot be told apart: no keys for them (401 naming
	// the header), and nothing is started.
	if code, id, _ := idem("", "k-1"); code != http.StatusUnauthorized || id != "" {
		t.Errorf("an anonymous key: HTTP %d, started %q; want 401 and nothing started", code, id)
	}

	tests := []struct {
		name, path, body string
		hdr              map[string]string
		want             int
	}{
		{"unknown tool", "/api/v1/tools/nope/execute", body, nil, 404},
		{"disabled tool", "/api/v1/tools/old.tool/execute", body, nil, 404},
		{"hidden tool", "/api/v1/tools/currency.convert/execute", body, map[string]string{"X-Tool-Groups": "ops"}, 404},
		{"bad key", "/api/v1/tools/currency.convert/execute", body, map[string]string{"Idempotency-Key": "has space"}, 400},
		{"bad key on a verb", "/api/v1/verbs", `{"verb":"CONVERT_CURRENCY"}`, map[string]string{"Idempotency-Key": "has space"}, 400},
		{"anonymous key on a verb", "/api/v1/verbs", `{"verb":"CONVERT_CURRENCY"}`, map[string]string{"Idempotency-Key": "k-1"}, 401},
		{"bad body", "/api/v1/tools/currency.convert/execute", `{"inputs":[1]}`, nil, 400},
		{"bad wait", "/api/v1/tools/currency.convert/execute?wait=x", body, nil, 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeTemporal{run: &fakeRun{result: out}}
			if code, _ := serve(t, f, tools, http.MethodPost, tc.path, tc.body, tc.hdr); code != tc.want {
				t.Errorf("HTTP %d, want %d", code, tc.want)
			}
			if len(f.started) != 0 {
				t.Errorf("a workflow was started")
			}
		})
	}
}

func TestRefreshModules(t *testing.T) {
	f := &fakeTemporal{run: &fakeRun{runID: "r1", result: workflows.RefreshModulesResult{}}}
	code, resp := serve(t, f, nil, http.MethodPost, "/api/v1/modules/refresh", "", nil)
	if code != http.StatusAccepted || !strings.HasPrefix(resp.Data.WorkflowID, "modules-refresh-") {
		t.Fatalf("HTTP %d %+v", code, resp.Data.Run)
	}
	code, resp = serve(t, f, nil, http.MethodPost, "/api/v1/modules/refresh?wait=1s", "", nil)
	if code != http.StatusOK || resp.Data.Status != "completed" {
		t.Fatalf("wait: HTTP %d %+v", code, resp.Data.Run)
	}
}

func TestNewPanicsWithoutStarter(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New(nil, …) did not panic")
		}
	}()
	verbs.New(nil, nil, verbs.Config{})
}

// TestReindexProgressBadID: a reindex run id that is not a UUID (Temporal
// refuses it as an invalid argument) is a 400 naming the id, not a 500;
// "latest" and a UUID reach Temporal.
func TestReindexProgressBadID(t *testing.T) {
	for _, id := range []string{"foo", "%2E", "latest%20", "0000"} {
		f := &fakeTemporal{run: &fakeRun{}, progress: workflows.ReindexProgress{Total: 3}}
		code, resp := serve(t, f, nil, http.MethodGet, "/api/v1/tools/admin/reindex/"+id, "", asU1)
		if code != http.StatusBadRequest || len(resp.Error.Fields) != 1 || resp.Error.Fields[0].Path != "id" {
			t.Errorf("%s: HTTP %d %+v", id, code, resp.Error)
		}
	}
	for _, id := range []string{"latest", uuid.NewString()} {
		f := &fakeTemporal{run: &fakeRun{}, progress: workflows.ReindexProgress{Total: 3}}
		if code, resp := serve(t, f, nil, http.MethodGet, "/api/v1/tools/admin/reindex/"+id, "", asU1); code != http.StatusOK {
			t.Errorf("%s: HTTP %d %+v", id, code, resp.Error)
		}
	}
}

// An admin reading another caller's run sees no candidate, executed tool
// or reason naming a tool only the run's caller may execute; the owner
// sees the whole record.
func TestGetVerbHidesToolsTheReaderMayNotExecute(t *testing.T) {
	tools := fakeTools{
		"deployer.deploy_app": {ToolSummary: graph.ToolSummary{ID: "deployer.deploy_app", Status: graph.StatusActive, Permissions: []string{"role:developer"}}},
		"currency.convert":    {ToolSummary: graph.ToolSummary{ID: "currency.convert", Status: graph.StatusActive}},
	}
	res := workflows.NovelVerbResult{Verb: "SHIP_IT", Branch: "substitute", Reason: "SHIP_IT matches deployer.deploy_app (DEPLOY_APPLICATION) over currency.convert",
		Scores:    []workflows.ScoredTool{{ToolID: "deployer.deploy_app", Verb: "DEPLOY_APPLICATION", Score: 0.9}, {ToolID: "currency.convert", Score: 0.2}},
		Tools:     []string{"deployer.deploy_app"},
		Arguments: map[string]any{"app": "secret-app"}, Output: map[string]any{"url": "secret-url"},
		Judge: &workflows.Judgement{DecidedBy: "rule", RulePick: "deployer.deploy_app", Offered: []string{"deployer.deploy_app", "currency.convert"}}}
	for _, tc := range []struct {
		level  string
		hidden bool
	}{{"admin", true}, {"owner", false}} {
		t.Run(tc.level, func(t *testing.T) {
			f := &fakeTemporal{run: &fakeRun{result: res}, desc: describe("NovelVerbWorkflow", enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED)}
			code, resp := serve(t, f, tools, http.MethodGet, "/api/v1/verbs/verb-A_B-1", "", map[string]string{"X-Test-User": "ops", "X-Test-Level": tc.level})
			if code != 200 {
				t.Fatalf("HTTP %d", code)
			}
			body := string(resp.Data.Result)
			for _, leak := range []string{"deployer.deploy_app", "DEPLOY_APPLICATION", "secret-app", "secret-url"} {
				if strings.Contains(body, leak) == tc.hidden {
					t.Errorf("%s: %q shown = %v: %s", tc.level, leak, !tc.hidden, body)
				}
			}
			if !strings.Contains(body, "currency.convert") {
				t.Errorf("%s: a visible candidate is gone: %s", tc.level, body)
			}
		})
	}
}

// Two Idempotency-Key headers are a 400 naming the header, on execute and
// on a verb, and nothing starts: the first is never silently chosen.
func TestTwoIdempotencyKeysAreRefused(t *testing.T) {
	gin.SetMode(gin.TestMode)
	tools := fakeTools{"currency.convert": {ToolSummary: graph.ToolSummary{ID: "currency.convert", Status: graph.StatusActive, Groups: []string{"default"}}}}
	for path, body := range map[string]string{"/api/v1/tools/currency.convert/execute": `{"inputs":{"amount":100}}`, "/api/v1/verbs": `{"verb":"CONVERT_CURRENCY"}`} {
		f := &fakeTemporal{run: &fakeRun{runID: "r1"}}
		r := gin.New()
		r.Use(httpxtest.HeaderIdentity())
		verbs.New(f, tools, verbs.Config{}).Mount(r.Group("/api/v1"))
		for _, keys := range [][]string{{"k-1", "k-2"}, {""}, {"  "}} {
			req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
			req.Header.Set("X-Test-User", "u1")
			for _, k := range keys {
				req.Header.Add("Idempotency-Key", k)
			}
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, req)
			var resp response
			if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
				t.Fatal(err)
			}
			if rec.Code != http.StatusBadRequest || len(resp.Error.Fields) != 1 || resp.Error.Fields[0].Path != "Idempotency-Key" || len(f.started) != 0 {
				t.Errorf("%s %q: HTTP %d %+v, started %d; want 400 on Idempotency-Key and nothing started", path, keys, rec.Code, resp.Error, len(f.started))
			}
		}
	}
}
