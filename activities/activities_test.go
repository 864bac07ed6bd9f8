package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/demomodule"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/internal/temporallog"
	"github.com/toolsmith/toolsmith/llm"
	"github.com/toolsmith/toolsmith/modules"
	"github.com/toolsmith/toolsmith/tool"
)

type memTools map[string]graph.Tool

func (m memTools) GetTool(_ context.Context, id string) (graph.Tool, error) {
	t, ok := m[id]
	if !ok {
		return graph.Tool{}, fmt.Errorf("get %q: %w", id, fault.ErrNotFound)
	}
	return t, nil
}

func (m memTools) add(man tool.Manifest, edit func(*graph.Tool)) {
	raw, _ := json.Marshal(man)
	t := graph.Tool{ToolSummary: graph.ToolSummary{ID: man.ToolID, Verb: man.Verb, Module: man.Module, Status: graph.StatusActive,
		State: man.State, AvailableInStates: man.AvailableInStates, RequiredLevel: man.RequiredPermission}, Manifest: raw}
	if edit != nil {
		edit(&t)
	}
	m[man.ToolID] = t
}

type usageLog struct {
	events []graph.UsageEvent
	pairs  []graph.PairEvidence
}

func (u *usageLog) RecordUsage(_ context.Context, ev []graph.UsageEvent) error {
	u.events = append(u.events, ev...)
	return nil
}

func (u *usageLog) LearnPairs(_ context.Context, ev []graph.PairEvidence) error {
	u.pairs = append(u.pairs, ev...)
	return nil
}

// logRecords is a slog.Handler that keeps the records it handles.
type logRecords struct {
	mu      sync.Mutex
	records []slog.Record
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }

func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r.Clone())
	return nil
}

func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecords) WithGroup(string) slog.Handler      { return l }

// count counts the records of msg at level.
func (l *logRecords) count(level slog.Level, msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.records {
		if r.Level == level && r.Message == msg {
			n++
		}
	}
	return n
}

// all lists the records' levels and messages.
func (l *logRecords) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.records {
		out = append(out, r.Level.String()+" "+r.Message)
	}
	return out
}

// fakeModule answers /execute as the test says.
func fakeModule(t *testing.T, h http.HandlerFunc) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func currencyManifest(t *testing.T) tool.Manifest {
	m, err := demomodule.New("currency")
	if err != nil {
		t.Fatal(err)
	}
	return m.Manifests()[0]
}

func appError(t *testing.T, err error) *temporal.ApplicationError {
	t.Helper()
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		t.Fatalf("err %v (%T) is not an application error", err, err)
	}
	return appErr
}

func TestExecuteTool(t *testing.T) {
	okResult := `{"tool_name":"currency.convert","success":true,"result":{"converted":9.63,"rate":0.9626}}`
	type tc struct {
		name       string
		handler    http.HandlerFunc
		in         ExecuteInput
		edit       func(*graph.Tool)
		timeout    time.Duration
		wantType   string
		retryable  bool
		wantMsg    string
		wantCalled bool
		// failure: a failed call records one failed use; a refusal of the
		// caller's own inputs records none.
		failure bool
		// anonymous: the call has no caller (the others are ana's).
		anonymous bool
		// refused: a refusal of the caller's own inputs, which the
		// worker's log leaves out (the SDK logs it at debug); any other
		// failure is logged as "Activity error." at ERROR.
		refused bool
	}
	args := map[string]any{"amount": 10, "from": "USD", "to": "EUR"}
	reply := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status); _, _ = w.Write([]byte(body)) }
	}
	cases := []tc{
		{name: "success", handler: reply(200, okResult), in: ExecuteInput{ToolID: "currency.convert", Inputs: args}, wantCalled: true},
		{name: "http 500", handler: reply(500, "Internal Server Error"), in: ExecuteInput{ToolID: "currency.convert", Inputs: args},
			wantType: ErrTypeModuleUnavailable, retryable: true, wantMsg: "Module returned status 500: Internal Server Error", wantCalled: true, failure: true},
		{name: "http 400", handler: reply(400, "bad"), in: ExecuteInput{ToolID: "currency.convert", Inputs: args},
			wantType: ErrTypeModuleRejected, wantMsg: "Module returned status 400: bad", wantCalled: true, refused: true},
		{name: "http 403", handler: reply(403, "no"), in: ExecuteInput{ToolID: "currency.convert", Inputs: args},
			wantType: ErrTypeModuleRejected, wantMsg: "Module returned status 403: no", wantCalled: true, failure: true},
		{name: "timeout", handler: func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(time.Second):
			case <-r.Context().Done():
			}
		}, timeout: 30 * time.Millisecond, in: ExecuteInput{ToolID: "currency.convert", Inputs: args},
			wantType: ErrTypeModuleTimeout, retryable: true, wantMsg: "Tool execution timed out", wantCalled: true, failure: true},
		{name: "tool error", handler: reply(200, `{"tool_name":"currency.convert","success":false,"error":"unsupported currency"}`),
			in: ExecuteInput{ToolID: "currency.convert", Inputs: args}, wantType: ErrTypeToolFailed, wantMsg: "unsupported currency", wantCalled: true, anonymous: true, refused: true},
		{name: "tool error, signed in", handler: reply(200, `{"tool_name":"currency.convert","success":false,"error":"rate unavailable"}`),
			in: ExecuteInput{ToolID: "currency.convert", Inputs: args}, wantType: ErrTypeToolFailed, wantMsg: "rate unavailable", wantCalled: true, failure: true},
		{name: "bad response", handler: reply(200, `not json`), in: ExecuteInput{ToolID: "currency.convert", Inputs: args},
			wantType: ErrTypeToolFailed, wantMsg: "invalid ToolResult", wantCalled: true, failure: true},
		{name: "output schema", handler: reply(200, `{"tool_name":"currency.convert","success":true,"result":{"rate":1}}`),
			in: ExecuteInput{ToolID: "currency.convert", Inputs: args}, wantType: ErrTypeSchemaMismatch, wantMsg: "converted", wantCalled: true, failure: true},
		{name: "input type mismatch", in: ExecuteInput{ToolID: "currency.convert", Inputs: map[string]any{"amount": "10", "from": "USD", "to": "EUR"}},
			wantType: ErrTypeSchemaMismatch, wantMsg: "/amount", refused: true},
		{name: "missing input", in: ExecuteInput{ToolID: "currency.convert", Inputs: map[string]any{"amount": 10}},
			wantType: ErrTypeSchemaMismatch, wantMsg: "inputs.from", refused: true},
		{name: "unknown tool", in: ExecuteInput{ToolID: "nope.tool"}, wantType: ErrTypeToolNotFound},
		{name: "deprecated", edit: func(t *graph.Tool) { t.Status = graph.StatusDeprecated }, in: ExecuteInput{ToolID: "currency.convert", Inputs: args},
			wantType: ErrTypeToolNotFound, wantMsg: "deprecated"},
		{name: "forbidden", edit: func(t *graph.Tool) { t.RequiredLevel = "admin" }, in: ExecuteInput{ToolID: "currency.convert", Inputs: args},
			wantType: ErrTypeForbidden, wantMsg: "level"},
		{name: "dry run", in: ExecuteInput{ToolID: "currency.convert", Inputs: args, DryRun: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			calls, key := 0, ""
			url := fakeModule(t, func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				calls++
				key = r.Header.Get(modules.HeaderIdempotencyKey)
				mu.Unlock()
				if c.handler != nil {
					c.handler(w, r)
				}
			})
			cfg := modules.NewConfig()
			_ = cfg.Add("currency=" + url)
			if c.timeout > 0 {
				cfg.DefaultTimeout = c.timeout
			}
			tools := memTools{}
			tools.add(currencyManifest(t), c.edit)
			usage := &usageLog{}
			var s testsuite.WorkflowTestSuite
			logged := &logRecords{}
			// The worker's logger adapter, as the worker wires it.
			s.SetLogger(temporallog.Quiet(slog.New(logged)))
			env := s.NewTestActivityEnvironment()
			a := &Modules{Router: modules.NewRouter(cfg), Schemas: tools, Usage: usage, Pairs: usage}
			env.RegisterActivity(a)
			// An earlier step of the same plan ran units.convert (and this
			// tool): a success pairs the two once.
			in := c.in
			in.PairWith = []string{"units.convert", in.ToolID, "units.convert"}
			if !c.anonymous {
				in.Caller.UserID, in.Caller.Level = "ana", "user"
			}

			val, err := env.ExecuteActivity(a.ExecuteTool, in)
			mu.Lock()
			called, key := calls, key
			mu.Unlock()
			if (called > 0) != c.wantCalled {
				t.Fatalf("module called %d times, wantCalled %v", called, c.wantCalled)
			}
			if c.wantType == "" {
				if err != nil {
					t.Fatal(err)
				}
				var out ExecuteOutput
				if err := val.Get(&out); err != nil {
					t.Fatal(err)
				}
				if c.in.DryRun {
					if !out.DryRun || out.Output != nil || out.Arguments["amount"] != 10.0 || len(usage.events) != 0 || len(usage.pairs) != 0 {
						t.Fatalf("dry run = %+v, usage %+v, pairs %+v", out, usage.events, usage.pairs)
					}
					return
				}
				if out.Output.(map[string]any)["converted"] != 9.63 || out.State != access.DefaultState {
					t.Fatalf("out = %+v", out)
				}
				if key == "" || key != out.IdempotencyKey || !strings.Contains(key, "/") {
					t.Fatalf("idempotency key sent %q, reported %q", key, out.IdempotencyKey)
				}
				if len(usage.events) != 1 || !usage.events[0].Success || usage.events[0].Level != "user" {
					t.Fatalf("usage = %+v, want one success of ana's, at her level", usage.events)
				}
				if p := usage.pairs; len(p) != 1 || p[0].A != "currency.convert" || p[0].B != "units.convert" || p[0].Caller != "ana" || !strings.HasPrefix(p[0].Session, "plan/") {
					t.Fatalf("plan pairs = %+v, want currency.convert with units.convert once, ana's, in the plan's session", p)
				}
				return
			}
			if len(usage.pairs) != 0 {
				t.Fatalf("a failed execution paired tools: %+v", usage.pairs)
			}
			// A tool's refusal of the caller's own inputs (a 400, or a
			// guest's tool result with success false) is not
			// counted as the tool failing: it must not lower the tool's
			// success rate for everyone.
			if c.failure != (len(usage.events) == 1) || len(usage.events) > 1 || (len(usage.events) == 1 && usage.events[0].Success) {
				t.Fatalf("usage = %+v, want one failed use: %v", usage.events, c.failure)
			}
			appErr := appError(t, err)
			if appErr.Type() != c.wantType || appErr.NonRetryable() == c.retryable {
				t.Fatalf("type %q nonRetryable %v, want %q retryable %v (%v)", appErr.Type(), appErr.NonRetryable(), c.wantType, c.retryable, err)
			}
			// Anyone can send inputs a tool refuses: such a refusal must
			// not reach the server's log at ERROR, or any caller could
			// flood it; the tool's own failures still do.
			if n := logged.count(slog.LevelError, "Activity error."); n != map[bool]int{true: 0, false: 1}[c.refused] {
				t.Fatalf("\"Activity error.\" logged at ERROR %d times (records %v), refusal of the caller's inputs: %v", n, logged.all(), c.refused)
			}
			if !strings.Contains(err.Error(), c.wantMsg) {
				t.Fatalf("error %q does not contain %q", err, c.wantMsg)
			}
		})
	}
}

// TestPlanPairsNeedACaller: a plan's successful tools pair only for a
// signed-in caller who may teach the shared learned data (an anonymous
// caller's or a guest key's plans teach no one, though their uses are
// recorded), in the caller's session when it names one.
func TestPlanPairsNeedACaller(t *testing.T) {
	okResult := `{"tool_name":"currency.convert","success":true,"result":{"converted":9.63,"rate":0.9626}}`
	url := fakeModule(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(okResult)) })
	cfg := modules.NewConfig()
	_ = cfg.Add("currency=" + url)
	tools := memTools{}
	tools.add(currencyManifest(t), nil)
	args := map[string]any{"amount": 10, "from": "USD", "to": "EUR"}
	for _, c := range []struct {
		name        string
		caller      access.Caller
		wantSession string
	}{
		{"anonymous", access.Caller{SessionID: "anonymous/anon1"}, ""},
		{"guest key, in a session", access.Caller{UserID: "key:g", SessionID: "key:g/gs1", Level: "guest"}, ""},
		{"signed in, in a session", access.Caller{UserID: "ana", SessionID: "ana/s1", Level: "user"}, "ana/s1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			usage := &usageLog{}
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			a := &Modules{Router: modules.NewRouter(cfg), Schemas: tools, Usage: usage, Pairs: usage}
			env.RegisterActivity(a)
			in := ExecuteInput{ToolID: "currency.convert", Inputs: args, Caller: c.caller, PairWith: []string{"units.convert"}}
			if _, err := env.ExecuteActivity(a.ExecuteTool, in); err != nil {
				t.Fatal(err)
			}
			if len(usage.events) != 1 || !usage.events[0].Success {
				t.Fatalf("usage = %+v, want one successful use", usage.events)
			}
			if c.wantSession == "" {
				if len(usage.pairs) != 0 {
					t.Fatalf("a plan of a caller who may not teach paired tools: %+v", usage.pairs)
				}
				return
			}
			if p := usage.pairs; len(p) != 1 || p[0].Caller != c.caller.UserID || p[0].Session != c.wantSession {
				t.Fatalf("plan pairs = %+v, want one of %s in %s", p, c.caller.UserID, c.wantSession)
			}
		})
	}
}

func TestExecuteToolStateAndUnknownModule(t *testing.T) {
	mod, _ := demomodule.New("currency")
	srv := httptest.NewServer(mod)
	defer srv.Close()
	cfg := modules.NewConfig()
	_ = cfg.Add("currency=" + srv.URL)
	tools := memTools{}
	man := currencyManifest(t)
	man.State = "priced"
	tools.add(man, nil)
	other := man
	other.ToolID, other.Module = "weather.today", "weather"
	tools.add(other, nil)
	local := man
	local.ToolID, local.Module = "localtool", ""
	tools.add(local, nil)

	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	a := &Modules{Router: modules.NewRouter(cfg), Schemas: tools}
	env.RegisterActivity(a)
	val, err := env.ExecuteActivity(a.ExecuteTool, ExecuteInput{ToolID: "currency.convert", Inputs: map[string]any{"amount": 1, "from": "USD", "to": "JPY"}})
	if err != nil {
		t.Fatal(err)
	}
	var out ExecuteOutput
	_ = val.Get(&out)
	if out.State != "priced" || out.Output.(map[string]any)["converted"] != 151.98 {
		t.Fatalf("out = %+v", out)
	}
	_, err = env.ExecuteActivity(a.ExecuteTool, ExecuteInput{ToolID: "weather.today", Inputs: map[string]any{"amount": 1, "from": "USD", "to": "JPY"}})
	if e := appError(t, err); e.Type() != ErrTypeUnknownModule || !e.NonRetryable() || !strings.Contains(err.Error(), "Unknown module: weather") {
		t.Fatalf("unknown module: %v", err)
	}
	_, err = env.ExecuteActivity(a.ExecuteTool, ExecuteInput{ToolID: "localtool", Inputs: map[string]any{"amount": 1, "from": "USD", "to": "JPY"}})
	if e := appError(t, err); e.Type() != ErrTypeNotExecutable {
		t.Fatalf("no module: %v", err)
	}
}

func TestExecuteToolNetworkError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	cfg := modules.NewConfig()
	_ = cfg.Add("currency=" + url)
	tools := memTools{}
	tools.add(currencyManifest(t), nil)
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	a := &Modules{Router: modules.NewRouter(cfg), Schemas: tools}
	env.RegisterActivity(a)
	_, err := env.ExecuteActivity(a.ExecuteTool, ExecuteInput{ToolID: "currency.convert", Inputs: map[string]any{"amount": 1, "from": "USD", "to": "EUR"}})
	if e := appError(t, err); e.Type() != ErrTypeModuleUnavailable || e.NonRetryable() || !strings.Contains(err.Error(), "Tool execution error:") {
		t.Fatalf("network error: %v", err)
	}
}

func TestModuleErrorMapping(t *testing.T) {
	ana := access.Caller{UserID: "ana", Level: "user"}
	cases := []struct {
		res       modules.Result
		caller    access.Caller
		typ       string
		retryable bool
		// benign: an outcome any caller can bring about (benign).
		benign bool
	}{
		{modules.Result{Kind: modules.KindInvalidName, Error: "Invalid tool name format: x"}, ana, ErrTypeInvalidToolName, false, true},
		{modules.Result{Kind: modules.KindUnknownModule}, ana, ErrTypeUnknownModule, false, true},
		{modules.Result{Kind: modules.KindInvalidInput}, ana, ErrTypeSchemaMismatch, false, true},
		{modules.Result{Kind: modules.KindInvalidOutput}, ana, ErrTypeSchemaMismatch, false, false},
		{modules.Result{Kind: modules.KindTimeout}, ana, ErrTypeModuleTimeout, true, false},
		{modules.Result{Kind: modules.KindNetwork}, ana, ErrTypeModuleUnavailable, true, false},
		{modules.Result{Kind: modules.KindHTTP, Status: 503}, ana, ErrTypeModuleUnavailable, true, false},
		{modules.Result{Kind: modules.KindHTTP, Status: 429}, ana, ErrTypeModuleUnavailable, true, false},
		{modules.Result{Kind: modules.KindHTTP, Status: 404}, ana, ErrTypeModuleRejected, false, false},
		{modules.Result{Kind: modules.KindHTTP, Status: 400}, ana, ErrTypeModuleRejected, false, true},
		{modules.Result{Kind: modules.KindHTTP, Status: 422}, access.Caller{}, ErrTypeModuleRejected, false, true},
		{modules.Result{Kind: modules.KindToolError}, ana, ErrTypeToolFailed, false, false},
		{modules.Result{Kind: modules.KindToolError}, access.Caller{}, ErrTypeToolFailed, false, true},
		{modules.Result{Kind: modules.KindBadResponse}, access.Caller{}, ErrTypeToolFailed, false, false},
	}
	for _, c := range cases {
		err := moduleError(c.res, c.caller)
		e := appError(t, err)
		if e.Type() != c.typ || e.NonRetryable() == c.retryable || (e.Category() == temporal.ApplicationErrorCategoryBenign) != c.benign {
			t.Errorf("%s/%d (caller %q): type %q nonRetryable %v category %v, want benign %v",
				c.res.Kind, c.res.Status, c.caller.UserID, e.Type(), e.NonRetryable(), e.Category(), c.benign)
		}
	}
	if ErrorType(moduleError(modules.Result{Kind: modules.KindCanceled}, ana)) != "" {
		t.Error("cancellation must not become an application error")
	}
}

// scripted is an llms.Model that returns a fixed answer or error.
type scripted struct {
	answer string
	err    error
}

func (s scripted) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	if s.err != nil {
		return nil, s.err
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: s.answer}}}, nil
}

func (s scripted) Call(ctx context.Context, p string, o ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, s, p, o...)
}

func TestDecomposeVerb(t *testing.T) {
	in := DecomposeInput{Verb: "PLAN_TRIP", Inputs: map[string]any{"budget": 10}}
	cases := []struct {
		name      string
		model     llms.Model
		typ       string
		retryable bool
		steps     int
	}{
		{"no model", nil, ErrTypeLLMUnavailable, false, 0},
		{"invalid plan", scripted{answer: `{"steps":[{"id":"a","verb":"X","inputs":{"b":"$inputs.nope"}}]}`}, ErrTypeInvalidPlan, false, 0},
		{"model down", scripted{err: errors.New("503 from provider")}, "", true, 0},
		{"valid", scripted{answer: `{"steps":[{"id":"a","verb":"convert currency","inputs":{"amount":"$inputs.budget"}}]}`}, "", false, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			a := &LLM{Model: c.model}
			env.RegisterActivity(a)
			val, err := env.ExecuteActivity(a.DecomposeVerb, in)
			switch {
			case c.typ != "":
				if e := appError(t, err); e.Type() != c.typ || !e.NonRetryable() {
					t.Fatalf("err = %v", err)
				}
				// No model is an outcome any caller can bring about (every
				// verb nothing fits), so it is no ERROR line in the log.
				if e := appError(t, err); (e.Category() == temporal.ApplicationErrorCategoryBenign) != (c.model == nil) {
					t.Fatalf("category %v of %v", e.Category(), err)
				}
			case c.retryable:
				var appErr *temporal.ApplicationError
				if err == nil || (errors.As(err, &appErr) && appErr.NonRetryable()) {
					t.Fatalf("want a retryable error, got %v", err)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				var p llm.Plan
				_ = val.Get(&p)
				if len(p.Steps) != c.steps || p.Steps[0].Verb != "CONVERT_CURRENCY" {
					t.Fatalf("plan = %+v", p)
				}
			}
		})
	}
}

type fixedSearcher []SearchHit

func (f fixedSearcher) Search(_ context.Context, req SearchRequest) ([]SearchHit, error) {
	if req.Query != "convert currency: money" {
		return nil, fmt.Errorf("unexpected query %q", req.Query)
	}
	return f, nil
}

type gapStore struct{ gaps []Gap }

func (g *gapStore) RecordGap(_ context.Context, gap Gap) error {
	g.gaps = append(g.gaps, gap)
	return nil
}

func TestGraphActivities(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	gaps := &gapStore{}
	g := &Graph{Searcher: fixedSearcher{
		{Tool: graph.ToolSummary{ID: "currency.list"}, Similarity: 0.9, Score: 0.4},
		{Tool: graph.ToolSummary{ID: "currency.convert", Verb: "CONVERT_CURRENCY", RequiredParams: []string{"amount"}}, Similarity: 0.8, Score: 1.2},
	}, Gaps: gaps}
	env.RegisterActivity(g)
	val, err := env.ExecuteActivity(g.SearchTools, SearchInput{Verb: "CONVERT_CURRENCY", Description: "money"})
	if err != nil {
		t.Fatal(err)
	}
	var out SearchOutput
	_ = val.Get(&out)
	// Candidates come sorted by score, highest first.
	if len(out.Candidates) != 2 || out.Candidates[0].Similarity != 0.8 || out.Candidates[0].Required[0] != "amount" || out.Candidates[1].ToolID != "currency.list" {
		t.Fatalf("out = %+v", out)
	}
	val, err = env.ExecuteActivity(g.RecordCapabilityGap, Gap{Verb: "RESERVE_TABLE", Reason: "none"})
	if err != nil {
		t.Fatal(err)
	}
	var gout GapOutput
	_ = val.Get(&gout)
	if gout.Where != "store" || len(gaps.gaps) != 1 || gaps.gaps[0].WorkflowID == "" || gaps.gaps[0].At.IsZero() {
		t.Fatalf("gap out %+v stored %+v", gout, gaps.gaps)
	}

	env2 := s.NewTestActivityEnvironment()
	g2 := &Graph{}
	env2.RegisterActivity(g2)
	val, err = env2.ExecuteActivity(g2.RecordCapabilityGap, Gap{Verb: "X"})
	if err != nil {
		t.Fatal(err)
	}
	_ = val.Get(&gout)
	if gout.Where != "log" {
		t.Fatalf("without a recorder the gap goes to the log, got %+v", gout)
	}
	if _, err := env2.ExecuteActivity(g2.SearchTools, SearchInput{Verb: "X"}); err == nil {
		t.Fatal("search without a searcher succeeded")
	}
}

func TestDiscoverModules(t *testing.T) {
	mux, _ := demomodule.Mux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	cfg := modules.NewConfig()
	_ = cfg.Add("currency=" + srv.URL + "/currency")
	_ = cfg.Add("units=" + srv.URL + "/units")
	_ = cfg.Add("down=http://127.0.0.1:1")
	var got []string
	reg := modules.RegistrarFunc(func(_ context.Context, m tool.Manifest) error { got = append(got, m.ToolID); return nil })
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	a := &Modules{Router: modules.NewRouter(cfg, modules.WithRegistrar(reg))}
	env.RegisterActivity(a)
	val, err := env.ExecuteActivity(a.DiscoverModules)
	if err != nil {
		t.Fatal(err)
	}
	var out DiscoverOutput
	_ = val.Get(&out)
	if len(out.Reports) != 3 || out.Reports[0].Module != "currency" || out.Reports[0].Error != "" || out.Reports[0].Registered != 3 {
		t.Fatalf("reports = %+v", out.Reports)
	}
	if out.Reports[1].Module != "down" || out.Reports[1].Error == "" {
		t.Fatalf("unreachable module not reported: %+v", out.Reports[1])
	}
	if strings.Join(got, ",") != "currency.convert,currency.list_currencies,currency.rates,units.calculate,units.convert" {
		t.Fatalf("registered %v", got)
	}
}

// fakeStore implements the two graph.Store methods StoreSearcher uses.
type fakeStore struct {
	graph.Store
	vec, text []graph.Hit
	filtered  bool
}

func (f *fakeStore) VectorSearch(_ context.Context, _ []float32, k int, flt graph.Filter) ([]graph.Hit, error) {
	f.filtered = flt.Allow != nil
	return f.vec, nil
}

func (f *fakeStore) TextSearch(_ context.Context, _ string, _ int, _ graph.Filter) ([]graph.Hit, error) {
	return f.text, nil
}

type unitEmbedder struct{}

func (unitEmbedder) EmbedDocuments(context.Context, []string) ([][]float32, error) { return nil, nil }
func (unitEmbedder) EmbedQuery(context.Context, string) ([]float32, error)         { return []float32{1}, nil }

func TestStoreSearcher(t *testing.T) {
	st := &fakeStore{
		vec:  []graph.Hit{{Tool: graph.ToolSummary{ID: "b"}, Score: 0.4}, {Tool: graph.ToolSummary{ID: "a"}, Score: 0.9}},
		text: []graph.Hit{{Tool: graph.ToolSummary{ID: "c"}, Score: 7}, {Tool: graph.ToolSummary{ID: "a"}, Score: 3}},
	}
	hits, err := StoreSearcher{Store: st, Embedder: unitEmbedder{}}.Search(context.Background(), SearchRequest{Query: "q", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range hits {
		ids = append(ids, fmt.Sprintf("%s:%.1f", h.Tool.ID, h.Similarity))
	}
	if strings.Join(ids, " ") != "a:0.9 b:0.4 c:0.0" || !st.filtered {
		t.Fatalf("hits = %v filtered %v", ids, st.filtered)
	}
	if _, err := (StoreSearcher{}).Search(context.Background(), SearchRequest{}); err == nil {
		t.Fatal("searcher without store succeeded")
	}
}

func TestVerbQuery(t *testing.T) {
	if got := VerbQuery("CONVERT_CURRENCY", " from USD "); got != "convert currency: from USD" {
		t.Fatalf("got %q", got)
	}
	if got := VerbQuery("RESERVE_TABLE", ""); got != "reserve table" {
		t.Fatalf("got %q", got)
	}
}

// TestSearchParamTypes: a search that asks for them carries the JSON types
// of each candidate's required parameters, read from its manifest's input
// schema; a tool the source cannot read, or a search that does not ask,
// carries none.
func TestSearchParamTypes(t *testing.T) {
	tools := memTools{}
	tools.add(tool.Manifest{ToolID: "currency.convert", Verb: "CONVERT_CURRENCY", Module: "currency",
		InputSchema: json.RawMessage(`{"type":"object","required":["amount","from","to","when"],"properties":{
			"amount":{"type":"number"},"from":{"type":"string"},"to":{"type":["string","null"]},"when":{"anyOf":[{"type":"string"}]},
			"note":{"type":"string"}}}`)}, nil)
	searcher := fixedSearcher{
		{Tool: graph.ToolSummary{ID: "currency.convert", RequiredParams: []string{"amount", "from", "to", "when"}}, Similarity: 0.8, Score: 2},
		{Tool: graph.ToolSummary{ID: "gone.tool", RequiredParams: []string{"x"}}, Similarity: 0.5, Score: 1},
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	g := &Graph{Searcher: searcher, Schemas: tools}
	env.RegisterActivity(g)
	for _, ask := range []bool{true, false} {
		val, err := env.ExecuteActivity(g.SearchTools, SearchInput{Verb: "CONVERT_CURRENCY", Description: "money", ParamTypes: ask})
		if err != nil {
			t.Fatal(err)
		}
		var out SearchOutput
		if err := val.Get(&out); err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(out.Candidates[0].RequiredTypes)
		want := `{"amount":["number"],"from":["string"],"to":["string","null"]}`
		if !ask {
			want = "null"
		}
		if string(got) != want || out.Candidates[1].RequiredTypes != nil {
			t.Fatalf("asked %v: types %s and %v, want %s and none", ask, got, out.Candidates[1].RequiredTypes, want)
		}
	}
}

// TestSearchModuleLessAvailability: a candidate whose manifest names no
// module is available as ExecuteTool would run it: a tool registered
// without one runs on its namespace's module, so it is Unavailable when
// the deployment does not route that module (a planner's verb must not
// substitute a tool that could only fail with UnknownModule); an
// onboarded wrapper runs through the wrapper runtime and stays
// available; a tool whose manifest cannot be read is left available.
func TestSearchModuleLessAvailability(t *testing.T) {
	tools := memTools{}
	tools.add(tool.Manifest{ToolID: "lang.translate", Verb: "TRANSLATE_TEXT"}, nil)
	tools.add(tool.Manifest{ToolID: "currency.extra", Verb: "CONVERT_CURRENCY"}, nil)
	tools.add(tool.Manifest{ToolID: "pets.list_pets", Verb: "LIST_PETS", Source: &tool.Source{Origin: "openapi", SpecURL: "https://specs.example/pets.yaml"}}, nil)
	searcher := fixedSearcher{
		{Tool: graph.ToolSummary{ID: "lang.translate"}, Similarity: 0.8, Score: 5},
		{Tool: graph.ToolSummary{ID: "currency.extra"}, Similarity: 0.7, Score: 4},
		{Tool: graph.ToolSummary{ID: "pets.list_pets"}, Similarity: 0.6, Score: 3},
		{Tool: graph.ToolSummary{ID: "gone.tool"}, Similarity: 0.5, Score: 2},
		{Tool: graph.ToolSummary{ID: "currency.convert", Module: "currency"}, Similarity: 0.4, Score: 1},
	}
	routed := func(module, id string) bool { return module == "currency" && id == "currency.convert" }
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	g := &Graph{Searcher: searcher, Schemas: tools, Routed: routed}
	env.RegisterActivity(g)
	val, err := env.ExecuteActivity(g.SearchTools, SearchInput{Verb: "CONVERT_CURRENCY", Description: "money"})
	if err != nil {
		t.Fatal(err)
	}
	var out SearchOutput
	if err := val.Get(&out); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"lang.translate": true, "currency.extra": true, "pets.list_pets": false, "gone.tool": false, "currency.convert": false}
	for _, c := range out.Candidates {
		if c.Unavailable != want[c.ToolID] {
			t.Errorf("%s: unavailable %v, want %v", c.ToolID, c.Unavailable, want[c.ToolID])
		}
	}
}
