package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/api/verbs"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/demomodule"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/workflows"
)

// searchCaller is who the tests search as when they read the env's
// retrieval service directly: an admin who sees every group.
var searchCaller = access.Caller{UserID: "e2e", Level: "admin", Groups: []string{access.Wildcard}}

// verbRun is verbs.Run with the result typed.
type verbRun struct {
	verbs.Run
	Result workflows.NovelVerbResult `json:"result"`
}

// hashingThreshold is the substitution threshold for the hashing embedder.
// workflows.DefaultThreshold (0.60) is calibrated on the USE embedder; the
// hashing embedder's cosines sit lower (CONVERT_CURRENCY reaches
// currency.convert at 0.32, the runner-up currency.list_currencies 0.30),
// and workflows/CALIBRATION.md gives ~0.3 for it.
const hashingThreshold = 0.3

// convertBody carries a description, as planners do: with the verb alone
// the hashing embedder's margin over the threshold is two hundredths.
var convertBody = map[string]any{
	"verb":        "CONVERT_CURRENCY",
	"description": "convert an amount of money between currencies",
	"inputs":      map[string]any{"amount": 100, "from": "USD", "to": "EUR"},
	"options":     map[string]any{"threshold": hashingThreshold},
}

// wantConversion asks a fresh demo currency module directly what 100 USD
// in EUR is, so the test does not restate the demo rate table.
func wantConversion(t *testing.T) map[string]any {
	t.Helper()
	m, err := demomodule.New("currency")
	if err != nil {
		t.Fatal(err)
	}
	body := `{"tool_name":"currency.convert","arguments":{"amount":100,"from":"USD","to":"EUR"},"user_id":"e2e"}`
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/execute", strings.NewReader(body)))
	var resp struct {
		Success bool           `json:"success"`
		Result  map[string]any `json:"result"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || !resp.Success {
		t.Fatalf("direct module call: %v %s", err, rec.Body.String())
	}
	return resp.Result
}

// TestVerbIdempotencyKey: POST /verbs takes an Idempotency-Key as execute
// does: the same key and request answer the first run without a second
// workflow or module call; the same key with another request (other
// inputs, another verb) is a 422 naming the key, and runs nothing.
func TestVerbIdempotencyKey(t *testing.T) {
	e := newEnv(t)
	hdr := http.Header{verbs.HeaderIdempotencyKey: {"verb-order-7"}}
	var first, second verbRun
	if code := e.do(http.MethodPost, "/api/v1/verbs?wait=30s", convertBody, hdr, &first); code != http.StatusOK || first.Status != workflows.StatusCompleted {
		t.Fatalf("first: HTTP %d status %q error %q", code, first.Status, first.Error)
	}
	if code := e.do(http.MethodPost, "/api/v1/verbs?wait=30s", convertBody, hdr, &second); code != http.StatusOK || second.Status != workflows.StatusCompleted {
		t.Fatalf("repeat: HTTP %d status %q", code, second.Status)
	}
	if second.WorkflowID != first.WorkflowID || second.RunID != first.RunID {
		t.Errorf("repeat ran %s/%s, want the first run %s/%s", second.WorkflowID, second.RunID, first.WorkflowID, first.RunID)
	}
	if n := e.modules["currency"].Executions(""); n != 1 {
		t.Errorf("currency module ran %d times, want 1", n)
	}
	other := map[string]any{}
	for k, v := range convertBody {
		other[k] = v
	}
	other["inputs"] = map[string]any{"amount": 5, "from": "USD", "to": "EUR"}
	exchange := map[string]any{}
	for k, v := range convertBody {
		exchange[k] = v
	}
	exchange["verb"] = "EXCHANGE_MONEY"
	for name, body := range map[string]map[string]any{"other inputs": other, "another verb": exchange} {
		if code := e.do(http.MethodPost, "/api/v1/verbs?wait=30s", body, hdr, nil); code != http.StatusUnprocessableEntity {
			t.Errorf("a reused key with %s: HTTP %d, want 422", name, code)
		}
	}
	if n := e.modules["currency"].Executions(""); n != 1 {
		t.Errorf("after reused keys the currency module ran %d times, want 1", n)
	}
}

func TestConvertCurrencySubstitutes(t *testing.T) {
	e := newEnv(t)
	var run verbRun
	code := e.post("/api/v1/verbs?wait=30s", convertBody, &run)
	if code != http.StatusOK || run.Status != workflows.StatusCompleted {
		t.Fatalf("POST /verbs?wait=30s: HTTP %d status %q error %q (%s)", code, run.Status, run.Error, run.ErrorType)
	}
	res := run.Result
	if res.Branch != workflows.BranchSubstitute {
		t.Fatalf("branch = %q (%s, scores %+v), want substitute", res.Branch, res.Reason, res.Scores)
	}
	if len(res.Tools) != 1 || res.Tools[0] != "currency.convert" {
		t.Errorf("tools = %v, want [currency.convert]", res.Tools)
	}
	want := wantConversion(t)
	got, _ := res.Output.(map[string]any)
	for _, k := range []string{"converted", "rate", "from", "to"} {
		if got[k] != want[k] {
			t.Errorf("output[%s] = %v, want the module's %v", k, got[k], want[k])
		}
	}
	if !strings.HasPrefix(run.WorkflowID, "verb-CONVERT_CURRENCY-") {
		t.Errorf("workflowId = %q, want verb-CONVERT_CURRENCY-…", run.WorkflowID)
	}
	wantUI := "http://ui.invalid/namespaces/" + server.Namespace() + "/workflows/" + run.WorkflowID + "/" + run.RunID + "/history"
	if run.UIURL != wantUI {
		t.Errorf("uiUrl = %q, want %q", run.UIURL, wantUI)
	}
	if n := e.modules["currency"].Executions(""); n != 1 {
		t.Errorf("currency module ran %d times, want 1", n)
	}
	t.Logf("substituted %s (reason: %s) → %v", res.Tools, res.Reason, res.Output)

	// GET returns the same, completed run.
	var again verbRun
	if code := e.do(http.MethodGet, "/api/v1/verbs/"+run.WorkflowID, nil, nil, &again); code != http.StatusOK {
		t.Fatalf("GET /verbs/%s: HTTP %d", run.WorkflowID, code)
	}
	if again.Status != workflows.StatusCompleted || again.RunID != run.RunID || again.Result.Branch != workflows.BranchSubstitute {
		t.Errorf("GET = %+v", again.Run)
	}

	// The run is found by its search attributes through the visibility API.
	assertVisible(t, e, `ToolsmithVerb = "CONVERT_CURRENCY" AND ToolsmithBranch = "substitute" AND ToolsmithToolId = "currency.convert"`, run.WorkflowID)

	// The worker recorded the execution. A substitution the decision is
	// sure of teaches the verb's words, which retrieval learns from the
	// store without a restart (the query log); one it is not sure of
	// (below retrieval.TeachConfidence, as with the hashing embedder's
	// low similarities here) counts as a use and teaches nothing.
	q := activities.VerbQuery("CONVERT_CURRENCY", convertBody["description"].(string))
	if strings.Contains(res.Reason, "not sure enough") {
		eventually(t, 15*time.Second, func() error {
			u, err := e.store.Usage(context.Background(), []string{"currency.convert"})
			if err != nil {
				t.Fatal(err)
			}
			if u["currency.convert"].Uses < 1 {
				return fmt.Errorf("the substituted run was not recorded as a use: %+v", u)
			}
			return nil
		})
		served, err := e.store.ServedQueriesAfter(context.Background(), 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, sq := range served {
			if sq.Query == q {
				t.Fatalf("an unsure substitution taught its text: %+v", sq)
			}
		}
		return
	}
	eventually(t, 15*time.Second, func() error {
		res, err := e.search.Search(context.Background(), retrieval.Query{Text: q, MaxTools: 10, Caller: searchCaller})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			if h.Tool.ID == "currency.convert" && h.Breakdown.QueryLog.Raw > 0 {
				return nil
			}
		}
		return fmt.Errorf("the substituted run's query never reached the query log: hits %+v", res.Hits)
	})
}

// TestSessionRunsLearnPairings: two verbs a planner fulfils in one session
// (X-Session-ID) substitute two tools; the worker records both executions
// through retrieval's learning path, so the tools pair (learned). One
// caller's sessions alone show the pairing to no one, nor do guest keys'
// (however many); once a second signed-in caller of level user or above
// has used the two together, related?relationshipType=pairings serves it.
func TestSessionRunsLearnPairings(t *testing.T) {
	e := newEnv(t)
	units := map[string]any{
		"verb": "CONVERT_UNITS", "description": "convert a length from kilometres to miles",
		"inputs":  map[string]any{"value": 42.195, "from_unit": "km", "to_unit": "mi"},
		"options": map[string]any{"threshold": hashingThreshold},
	}
	planner := e.key(identity.NewKey{Owner: "e2e planner", Level: "user", Groups: []string{access.Wildcard}})
	learned := func() bool {
		t.Helper()
		rel, err := e.search.Related(context.Background(), "currency.convert", retrieval.RelPairings, 10, searchCaller)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rel {
			if r.ToolID == "units.convert" && r.Source == retrieval.PairLearned && r.RelationshipScore > 0 {
				return true
			}
		}
		return false
	}
	// Two guest keys run the two in a session each: their runs are
	// recorded, but a guest may not teach the shared learned data (as it
	// may not report uses), so they pair nothing, however many there are.
	for _, owner := range []string{"e2e guest", "e2e guest 2"} {
		guest := bearer(e.key(identity.NewKey{Owner: owner, Level: "guest", Groups: []string{access.Wildcard}}))
		guest.Set("X-Session-ID", "gs1")
		var run verbRun
		if code := e.do(http.MethodPost, "/api/v1/verbs?wait=30s", convertBody, guest, &run); code != http.StatusOK || run.Result.Branch != workflows.BranchSubstitute {
			t.Fatalf("guest convert: HTTP %d %+v", code, run.Result)
		}
		if code := e.do(http.MethodPost, "/api/v1/verbs?wait=30s", units, guest, &run); code != http.StatusOK || run.Result.Branch != workflows.BranchSubstitute {
			t.Fatalf("guest units: HTTP %d %+v", code, run.Result)
		}
	}
	if learned() {
		t.Fatal("two guest keys' sessions taught a pairing shown to everyone")
	}
	for i, who := range []http.Header{{}, bearer(planner)} {
		session := who.Clone()
		session.Set("X-Session-ID", "trip-42")
		var run verbRun
		if code := e.do(http.MethodPost, "/api/v1/verbs?wait=30s", convertBody, session, &run); code != http.StatusOK || run.Result.Branch != workflows.BranchSubstitute {
			t.Fatalf("convert: HTTP %d %+v", code, run.Result)
		}
		if code := e.do(http.MethodPost, "/api/v1/verbs?wait=30s", units, session, &run); code != http.StatusOK || run.Result.Branch != workflows.BranchSubstitute || len(run.Result.Tools) != 1 || run.Result.Tools[0] != "units.convert" {
			t.Fatalf("units: HTTP %d %+v", code, run.Result)
		}
		if i == 0 && learned() {
			t.Fatal("one caller's session alone showed its pairing to everyone")
		}
	}
	if !learned() {
		t.Fatal("pairings of currency.convert lack units.convert, learned from two callers' sessions")
	}
}

func assertVisible(t *testing.T, e *env, query, id string) {
	t.Helper()
	eventually(t, 10*time.Second, func() error {
		resp, err := e.client.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		if err != nil {
			t.Fatalf("ListWorkflow(%s): %v", query, err)
		}
		for _, ex := range resp.GetExecutions() {
			if ex.GetExecution().GetWorkflowId() == id {
				return nil
			}
		}
		return fmt.Errorf("workflow %s not listed by %s (got %d executions)", id, query, len(resp.GetExecutions()))
	})
}

func TestWorkerRestartCallsModuleOnce(t *testing.T) {
	e := newEnv(t)
	arrived := e.gate.close()
	defer e.gate.open()

	var run verbRun
	if code := e.post("/api/v1/verbs", convertBody, &run); code != http.StatusAccepted || run.Status != workflows.StatusRunning {
		t.Fatalf("POST /verbs: HTTP %d status %q", code, run.Status)
	}
	var key string
	select {
	case key = <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the module call never arrived")
	}
	if key == "" || !strings.HasPrefix(key, run.WorkflowID+"/") {
		t.Errorf("idempotency key = %q, want %s/<activity id>", key, run.WorkflowID)
	}

	// While the call is held: the run is in progress, in the substitute stage.
	var mid verbRun
	if code := e.do(http.MethodGet, "/api/v1/verbs/"+run.WorkflowID, nil, nil, &mid); code != http.StatusOK || mid.Status != workflows.StatusRunning {
		t.Fatalf("GET mid-run: HTTP %d status %q", code, mid.Status)
	}
	if mid.Progress == nil || mid.Progress.Stage != workflows.BranchSubstitute {
		t.Errorf("progress mid-run = %+v, want stage substitute", mid.Progress)
	}

	// Kill the worker mid-call, start a new one, then let the call through.
	e.stopWorker()
	e.startWorker()
	var retryKey string
	select {
	case retryKey = <-arrived:
	case <-time.After(60 * time.Second):
		t.Fatal("the new worker never retried the module call")
	}
	if retryKey != key {
		t.Errorf("retry carried key %q, want the first attempt's %q", retryKey, key)
	}
	e.gate.open()

	var done verbRun
	eventually(t, 60*time.Second, func() error {
		if code := e.do(http.MethodGet, "/api/v1/verbs/"+run.WorkflowID, nil, nil, &done); code != http.StatusOK {
			t.Fatalf("GET: HTTP %d", code)
		}
		if done.Status == workflows.StatusRunning {
			return fmt.Errorf("run %s still running after the restart", run.WorkflowID)
		}
		return nil
	})
	if done.Status != workflows.StatusCompleted || done.Result.Branch != workflows.BranchSubstitute {
		t.Fatalf("after restart: status %q branch %q error %q", done.Status, done.Result.Branch, done.Error)
	}
	mod := e.modules["currency"]
	if n := mod.Executions(key); n != 1 {
		t.Errorf("module executed the step %d times under key %s, want exactly 1", n, key)
	}
	if n := mod.Executions(""); n != 1 {
		t.Errorf("module executed %d calls in all, want 1", n)
	}
	t.Logf("module calls seen: %d (executed once, key %s)", len(mod.Calls()), key)
}

func TestNoLLMDecomposeFailsClearly(t *testing.T) {
	e := newEnv(t)
	var run verbRun
	code := e.post("/api/v1/verbs?wait=30s", map[string]any{
		"verb": "COMPOSE_SYMPHONY", "description": "write a four-movement orchestral symphony",
	}, &run)
	if code != http.StatusOK || run.Status != workflows.StatusFailed {
		t.Fatalf("HTTP %d status %q, want 200 failed", code, run.Status)
	}
	if run.ErrorType != activities.ErrTypeLLMUnavailable {
		t.Errorf("errorType = %q, want %s (error %q)", run.ErrorType, activities.ErrTypeLLMUnavailable, run.Error)
	}
	if run.Result.Branch != workflows.BranchDecompose || run.Result.Plan != nil {
		t.Errorf("result branch %q plan %v, want decompose without a plan", run.Result.Branch, run.Result.Plan)
	}
	if !strings.Contains(strings.ToLower(run.Error), "model") && !strings.Contains(strings.ToLower(run.Error), "llm") {
		t.Errorf("error %q does not say that no language model is configured", run.Error)
	}
	t.Logf("no-LLM reason: %s", run.Error)
	desc, err := e.client.DescribeWorkflowExecution(context.Background(), run.WorkflowID, run.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if s := desc.GetWorkflowExecutionInfo().GetStatus(); s != enumspb.WORKFLOW_EXECUTION_STATUS_FAILED {
		t.Errorf("Temporal status %s, want FAILED", s)
	}
	assertVisible(t, e, `ToolsmithVerb = "COMPOSE_SYMPHONY" AND ToolsmithBranch = "decompose"`, run.WorkflowID)
}

func TestExecuteToolThroughWorkflow(t *testing.T) {
	e := newEnv(t)
	body := map[string]any{"inputs": map[string]any{"amount": 100, "from": "USD", "to": "EUR"}}
	hdr := http.Header{verbs.HeaderIdempotencyKey: {"order-42"}}
	var first, second struct {
		verbs.Run
		Result workflows.ExecuteToolResult `json:"result"`
	}
	if code := e.do(http.MethodPost, "/api/v1/tools/currency.convert/execute", body, hdr, &first); code != http.StatusOK || first.Status != workflows.StatusCompleted {
		t.Fatalf("execute: HTTP %d status %q error %q", code, first.Status, first.Error)
	}
	want := wantConversion(t)
	if got, _ := first.Result.Output.(map[string]any); got["converted"] != want["converted"] {
		t.Errorf("output = %v, want converted %v", first.Result.Output, want["converted"])
	}
	// The same Idempotency-Key returns the first run without a second call.
	if code := e.do(http.MethodPost, "/api/v1/tools/currency.convert/execute", body, hdr, &second); code != http.StatusOK {
		t.Fatalf("repeat: HTTP %d", code)
	}
	if second.WorkflowID != first.WorkflowID || second.RunID != first.RunID {
		t.Errorf("repeat ran %s/%s, want the first run %s/%s", second.WorkflowID, second.RunID, first.WorkflowID, first.RunID)
	}
	if n := e.modules["currency"].Executions(""); n != 1 {
		t.Errorf("module executed %d times, want 1", n)
	}
	// The same key with other inputs is refused (422 naming the key), not
	// answered with the first run as if it were this request's.
	other := map[string]any{"inputs": map[string]any{"amount": 5, "from": "USD", "to": "EUR"}}
	if code := e.do(http.MethodPost, "/api/v1/tools/currency.convert/execute", other, hdr, nil); code != http.StatusUnprocessableEntity {
		t.Errorf("a reused key with other inputs: HTTP %d, want 422", code)
	}
	if n := e.modules["currency"].Executions(""); n != 1 {
		t.Errorf("after a reused key the module executed %d times, want 1", n)
	}
	assertVisible(t, e, `ToolsmithToolId = "currency.convert" AND ToolsmithBranch = "execute"`, first.WorkflowID)

	// Unknown tool: 404 without a workflow.
	if code := e.do(http.MethodPost, "/api/v1/tools/nope.nothing/execute", body, nil, nil); code != http.StatusNotFound {
		t.Errorf("unknown tool: HTTP %d, want 404", code)
	}
	// Hidden tool: a caller whose groups exclude it gets the unknown tool's 404.
	if code := e.do(http.MethodPost, "/api/v1/tools/currency.convert/execute", body, http.Header{"X-Tool-Groups": {"nobody"}}, nil); code != http.StatusNotFound {
		t.Errorf("hidden tool: HTTP %d, want 404", code)
	}
	// Inputs that do not fit the schema: a 422 before any run starts (the
	// execution's own check, run early); the module is not called.
	bodyBad := map[string]any{"inputs": map[string]any{"amount": "lots", "from": "USD", "to": "EUR"}}
	if code := e.do(http.MethodPost, "/api/v1/tools/currency.convert/execute", bodyBad, nil, nil); code != http.StatusUnprocessableEntity {
		t.Fatalf("bad inputs: HTTP %d, want 422", code)
	}
	if n := e.modules["currency"].Executions(""); n != 1 {
		t.Errorf("after bad inputs the module executed %d times, want 1", n)
	}
}

func TestVerbValidationAndWait(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name, path, body string
		want             int
		field            string
	}{
		{"bad wait", "/api/v1/verbs?wait=soon", `{"verb":"CONVERT_CURRENCY"}`, 400, "wait"},
		{"wait too long", "/api/v1/verbs?wait=5m", `{"verb":"CONVERT_CURRENCY"}`, 400, "wait"},
		{"missing verb", "/api/v1/verbs", `{"inputs":{}}`, 422, "verb"},
		{"lower-case verb", "/api/v1/verbs", `{"verb":"convert currency"}`, 422, "verb"},
		{"threshold out of range", "/api/v1/verbs", `{"verb":"CONVERT_CURRENCY","options":{"threshold":2}}`, 422, "options.threshold"},
		{"unknown field", "/api/v1/verbs", `{"verb":"CONVERT_CURRENCY","colour":"red"}`, 400, "colour"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, e.api.URL+tc.path, bytes.NewBufferString(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+e.admin)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			var env struct {
				Error struct {
					Fields []struct {
						Path string `json:"path"`
					} `json:"fields"`
				} `json:"error"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&env)
			if resp.StatusCode != tc.want {
				t.Errorf("HTTP %d, want %d", resp.StatusCode, tc.want)
			}
			if len(env.Error.Fields) == 0 || env.Error.Fields[0].Path != tc.field {
				t.Errorf("fields = %+v, want %s named", env.Error.Fields, tc.field)
			}
		})
	}
	// A wait shorter than the run answers 202 while it is still running.
	arrived := e.gate.close()
	defer e.gate.open()
	var run verbRun
	if code := e.post("/api/v1/verbs?wait=300ms", convertBody, &run); code != http.StatusAccepted || run.Status != workflows.StatusRunning {
		t.Errorf("short wait: HTTP %d status %q (branch %q, error %q %q), want 202 running", code, run.Status, run.Result.Branch, run.Error, run.Result.Error)
	}
	<-arrived
	// GET of an unknown id is 404.
	if code := e.do(http.MethodGet, "/api/v1/verbs/verb-NOPE-00000000", nil, nil, nil); code != http.StatusNotFound {
		t.Errorf("GET unknown: HTTP %d, want 404", code)
	}
}

// executed is an execute's answer.
type executed struct {
	verbs.Run
	Result workflows.ExecuteToolResult `json:"result"`
}

var (
	convertInputs = map[string]any{"inputs": map[string]any{"amount": 100, "from": "USD", "to": "EUR"}}
	unitsInputs   = map[string]any{"inputs": map[string]any{"value": 42.195, "from_unit": "km", "to_unit": "mi"}}
)

// withHeader is h and k: v.
func withHeader(h http.Header, k, v string) http.Header {
	out := h.Clone()
	out.Set(k, v)
	return out
}

// TestIdempotencyKeyStandsForOneRequest: a caller's key names one request
// across both routes and every tool: the same key on another tool, on
// POST /verbs, or with another dryRun is a 422 naming the key and runs
// nothing; a keyed run's id names neither route nor tool.
func TestIdempotencyKeyStandsForOneRequest(t *testing.T) {
	e := newEnv(t)
	key := http.Header{verbs.HeaderIdempotencyKey: {"order-77"}}
	var first executed
	if code := e.do(http.MethodPost, "/api/v1/tools/currency.convert/execute?wait=30s", convertInputs, key, &first); code != http.StatusOK || first.Status != workflows.StatusCompleted {
		t.Fatalf("execute: HTTP %d status %q error %q", code, first.Status, first.Error)
	}
	if strings.Contains(first.WorkflowID, "currency") {
		t.Errorf("a keyed run's workflowId %q names its tool", first.WorkflowID)
	}
	for name, c := range map[string]struct {
		path string
		body map[string]any
	}{
		"another tool":    {"/api/v1/tools/units.convert/execute?wait=30s", unitsInputs},
		"another route":   {"/api/v1/verbs?wait=30s", convertBody},
		"another dry run": {"/api/v1/tools/currency.convert/execute?wait=30s", map[string]any{"inputs": convertInputs["inputs"], "dryRun": true}},
	} {
		if code := e.do(http.MethodPost, c.path, c.body, key, nil); code != http.StatusUnprocessableEntity {
			t.Errorf("the key reused on %s: HTTP %d, want 422", name, code)
		}
	}
	// A verb's key on execute.
	vkey := http.Header{verbs.HeaderIdempotencyKey: {"verb-order-78"}}
	var verb verbRun
	if code := e.do(http.MethodPost, "/api/v1/verbs?wait=30s", convertBody, vkey, &verb); code != http.StatusOK || verb.Status != workflows.StatusCompleted {
		t.Fatalf("verb: HTTP %d status %q error %q", code, verb.Status, verb.Error)
	}
	if code := e.do(http.MethodPost, "/api/v1/tools/currency.convert/execute?wait=30s", convertInputs, vkey, nil); code != http.StatusUnprocessableEntity {
		t.Errorf("the verb's key on execute: HTTP %d, want 422", code)
	}
	if n, m := e.modules["currency"].Executions(""), e.modules["units"].Executions(""); n != 2 || m != 0 {
		t.Errorf("currency ran %d times, units %d; want 2 (one execute, one verb) and 0", n, m)
	}
}

// TestIdempotencyKeyCoversTheView: the caller's view of the catalogue is
// part of a keyed request: the same key and body with other narrowing
// headers (X-Allowed-Modules, X-Agent-State) is a 422, not the first
// run's answer, on execute and on a verb.
func TestIdempotencyKeyCoversTheView(t *testing.T) {
	e := newEnv(t)
	key := http.Header{verbs.HeaderIdempotencyKey: {"order-79"}}
	var first executed
	if code := e.do(http.MethodPost, "/api/v1/tools/currency.convert/execute?wait=30s", convertInputs, key, &first); code != http.StatusOK || first.Status != workflows.StatusCompleted {
		t.Fatalf("execute: HTTP %d status %q error %q", code, first.Status, first.Error)
	}
	vkey := http.Header{verbs.HeaderIdempotencyKey: {"verb-order-80"}}
	var verb verbRun
	if code := e.do(http.MethodPost, "/api/v1/verbs?wait=30s", convertBody, vkey, &verb); code != http.StatusOK || verb.Status != workflows.StatusCompleted {
		t.Fatalf("verb: HTTP %d status %q error %q", code, verb.Status, verb.Error)
	}
	for name, c := range map[string]struct {
		path string
		body map[string]any
		hdr  http.Header
	}{
		"execute, allowed modules": {"/api/v1/tools/currency.convert/execute?wait=30s", convertInputs, withHeader(key, "X-Allowed-Modules", "currency,units")},
		"execute, another state":   {"/api/v1/tools/currency.convert/execute?wait=30s", convertInputs, withHeader(key, "X-Agent-State", "checkout")},
		"verb, allowed modules":    {"/api/v1/verbs?wait=30s", convertBody, withHeader(vkey, "X-Allowed-Modules", "units")},
		"verb, another state":      {"/api/v1/verbs?wait=30s", convertBody, withHeader(vkey, "X-Agent-State", "checkout")},
	} {
		if code := e.do(http.MethodPost, c.path, c.body, c.hdr, nil); code != http.StatusUnprocessableEntity {
			t.Errorf("%s: HTTP %d, want 422", name, code)
		}
	}
	if n := e.modules["currency"].Executions(""); n != 2 {
		t.Errorf("currency ran %d times, want 2 (one execute, one verb)", n)
	}
}

// TestIdempotentRepeatAnswersTheEndedRun: a repeated keyed request joins
// the first run in the state it is in: a finished run answers its outcome
// (200, completed) even with ?wait=0s, on execute and on a verb.
func TestIdempotentRepeatAnswersTheEndedRun(t *testing.T) {
	e := newEnv(t)
	key := http.Header{verbs.HeaderIdempotencyKey: {"order-81"}}
	var first, again executed
	if code := e.do(http.MethodPost, "/api/v1/tools/currency.convert/execute?wait=30s", convertInputs, key, &first); code != http.StatusOK || first.Status != workflows.StatusCompleted {
		t.Fatalf("execute: HTTP %d status %q error %q", code, first.Status, first.Error)
	}
	if code := e.do(http.MethodPost, "/api/v1/tools/currency.convert/execute?wait=0s", convertInputs, key, &again); code != http.StatusOK ||
		again.Status != workflows.StatusCompleted || again.WorkflowID != first.WorkflowID || again.RunID != first.RunID || again.Result.ToolID != "currency.convert" {
		t.Errorf("execute repeat with wait=0s: HTTP %d %+v, want 200 completed, the first run %s/%s", code, again.Run, first.WorkflowID, first.RunID)
	}
	vkey := http.Header{verbs.HeaderIdempotencyKey: {"verb-order-82"}}
	var verb, vagain verbRun
	if code := e.do(http.MethodPost, "/api/v1/verbs?wait=30s", convertBody, vkey, &verb); code != http.StatusOK || verb.Status != workflows.StatusCompleted {
		t.Fatalf("verb: HTTP %d status %q error %q", code, verb.Status, verb.Error)
	}
	if code := e.do(http.MethodPost, "/api/v1/verbs?wait=0s", convertBody, vkey, &vagain); code != http.StatusOK ||
		vagain.Status != workflows.StatusCompleted || vagain.WorkflowID != verb.WorkflowID || vagain.Result.Branch != verb.Result.Branch {
		t.Errorf("verb repeat with wait=0s: HTTP %d %+v, want 200 completed, the first run %s", code, vagain.Run, verb.WorkflowID)
	}
	if n := e.modules["currency"].Executions(""); n != 2 {
		t.Errorf("currency ran %d times, want 2 (one execute, one verb)", n)
	}
}
