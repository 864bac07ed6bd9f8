package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/codegen/kit"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/modules"
	"github.com/toolsmith/toolsmith/tool"
)

type fakeWrapped struct {
	res  kit.Result
	err  error
	args map[string]any
}

func (f *fakeWrapped) RunWrapped(_ context.Context, toolID string, args map[string]any, _ access.Caller) (kit.Result, error) {
	f.args = args
	return f.res, f.err
}

// TestExecuteWrappedTools covers tools onboarded through the airlock: they
// run through the wrapper runtime, and its refusals and failures map to
// error types the workflows branch on.
func TestExecuteWrappedTools(t *testing.T) {
	tools := memTools{}
	man := tool.Manifest{ToolID: "pets.list_pets", Verb: "LIST_PETS", Name: "List pets", Description: "Lists pets.", Category: "pets",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"limit":{"type":"integer"}},"additionalProperties":false}`),
		Source:      &tool.Source{Origin: "openapi", SpecURL: "https://specs.example/pets.yaml"}}
	tools.add(man, nil)
	cases := []struct {
		name     string
		wrapped  *fakeWrapped
		errType  string
		retrying bool
		// uses is how many uses the call records: a wrapper's refusal of
		// the caller's inputs (kit.StageInput) records none.
		uses int
	}{
		{"ok", &fakeWrapped{res: kit.Result{Success: true, Status: 200, Result: json.RawMessage(`[{"name":"Rex"}]`)}}, "", false, 1},
		{"quota", &fakeWrapped{err: fmt.Errorf("daily quota reached: %w", fault.ErrLimit)}, ErrTypePolicyRefused, false, 0},
		{"access", &fakeWrapped{err: fmt.Errorf("not allowed: %w", fault.ErrForbidden)}, ErrTypePolicyRefused, false, 0},
		{"no approval", &fakeWrapped{err: fmt.Errorf("no approval: %w", fault.ErrNotFound)}, ErrTypeNotExecutable, false, 0},
		{"bad input", &fakeWrapped{res: kit.Result{Stage: kit.StageInput, Error: "invalid arguments"}}, ErrTypeSchemaMismatch, false, 0},
		{"network", &fakeWrapped{res: kit.Result{Stage: kit.StageNetwork, Error: "connection refused"}}, ErrTypeModuleUnavailable, true, 1},
		{"bad response", &fakeWrapped{res: kit.Result{Stage: kit.StageResponse, Error: "does not match the spec"}}, ErrTypeToolFailed, false, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			usage := &usageLog{}
			a := &Modules{Router: modules.NewRouter(modules.NewConfig()), Schemas: tools, Wrapped: c.wrapped, Usage: usage}
			env.RegisterActivity(a)
			val, err := env.ExecuteActivity(a.ExecuteTool, ExecuteInput{ToolID: "pets.list_pets", Inputs: map[string]any{"limit": 2}})
			if len(usage.events) != c.uses {
				t.Fatalf("usage = %+v, want %d use(s)", usage.events, c.uses)
			}
			if c.errType == "" {
				if err != nil {
					t.Fatal(err)
				}
				var out ExecuteOutput
				_ = val.Get(&out)
				if c.wrapped.args["limit"] != 2.0 && c.wrapped.args["limit"] != 2 {
					t.Fatalf("wrapper got %v", c.wrapped.args)
				}
				if out.Output.([]any)[0].(map[string]any)["name"] != "Rex" {
					t.Fatalf("output %+v", out.Output)
				}
				return
			}
			e := appError(t, err)
			if e.Type() != c.errType || e.NonRetryable() == c.retrying {
				t.Fatalf("err type %s (non-retryable %v), want %s", e.Type(), e.NonRetryable(), c.errType)
			}
			// A policy's refusal is the caller's situation, not the
			// service's fault: benign, logged at debug.
			if (c.errType == ErrTypePolicyRefused) != (e.Category() == temporal.ApplicationErrorCategoryBenign) && c.errType != ErrTypeSchemaMismatch {
				t.Fatalf("err type %s: category %v", e.Type(), e.Category())
			}
		})
	}
	// The upstream API's answers of 4xx, by modules' rule (refusedInput):
	// a 400 or 422 refuses the caller's inputs, whoever called, and any
	// other 4xx is the tool's failure for a user and above, and nothing
	// counted for a guest; both not counted are benign. A spec that does
	// not declare the status (kit.StageResponse) changes none of it.
	user := access.Caller{UserID: "key:ana", Level: "user"}
	guest := access.Caller{}
	for _, c := range []struct {
		name   string
		res    kit.Result
		caller access.Caller
		uses   int
		benign bool
	}{
		{"400, guest", kit.Result{Status: 400, Error: "the API answered 400"}, guest, 0, true},
		{"400, user", kit.Result{Status: 400, Error: "the API answered 400"}, user, 0, true},
		{"422, user", kit.Result{Status: 422, Error: "the API answered 422"}, user, 0, true},
		{"400 undeclared, user", kit.Result{Status: 400, Stage: kit.StageResponse, Error: "response does not match the spec"}, user, 0, true},
		{"404, guest", kit.Result{Status: 404, Error: "the API answered 404"}, guest, 0, true},
		{"404 undeclared, guest", kit.Result{Status: 404, Stage: kit.StageResponse, Error: "response does not match the spec"}, guest, 0, true},
		{"404, user", kit.Result{Status: 404, Error: "the API answered 404"}, user, 1, false},
		{"500, guest", kit.Result{Status: 500, Error: "the API answered 500"}, guest, 1, false},
		{"502, user", kit.Result{Status: 502, Error: "the API answered 502"}, user, 1, false},
		{"bad response, guest", kit.Result{Status: 200, Stage: kit.StageResponse, Error: "response does not match the spec"}, guest, 1, false},
	} {
		t.Run("upstream "+c.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			usage := &usageLog{}
			a := &Modules{Router: modules.NewRouter(modules.NewConfig()), Schemas: tools, Wrapped: &fakeWrapped{res: c.res}, Usage: usage}
			env.RegisterActivity(a)
			_, err := env.ExecuteActivity(a.ExecuteTool, ExecuteInput{ToolID: "pets.list_pets", Inputs: map[string]any{"limit": 2}, Caller: c.caller})
			if len(usage.events) != c.uses || (c.uses == 1 && usage.events[0].Success) {
				t.Fatalf("usage = %+v, want %d failed use(s)", usage.events, c.uses)
			}
			e := appError(t, err)
			if e.Type() != ErrTypeToolFailed || !e.NonRetryable() || (e.Category() == temporal.ApplicationErrorCategoryBenign) != c.benign {
				t.Fatalf("err type %s (non-retryable %v, category %v), want %s, benign %v", e.Type(), e.NonRetryable(), e.Category(), ErrTypeToolFailed, c.benign)
			}
		})
	}

	// The upstream's "not this time" (408, 429, 503) is tried again, as a
	// module's is; it counts as any answer of its status does.
	for _, c := range []struct {
		status int
		caller access.Caller
		uses   int
	}{{429, user, 1}, {429, guest, 0}, {408, user, 1}, {503, guest, 1}} {
		t.Run(fmt.Sprintf("upstream %d, %s", c.status, c.caller.Level), func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			usage := &usageLog{}
			res := kit.Result{Status: c.status, Error: fmt.Sprintf("the API answered %d", c.status)}
			a := &Modules{Router: modules.NewRouter(modules.NewConfig()), Schemas: tools, Wrapped: &fakeWrapped{res: res}, Usage: usage}
			env.RegisterActivity(a)
			_, err := env.ExecuteActivity(a.ExecuteTool, ExecuteInput{ToolID: "pets.list_pets", Inputs: map[string]any{"limit": 2}, Caller: c.caller})
			if len(usage.events) != c.uses {
				t.Fatalf("usage = %+v, want %d use(s)", usage.events, c.uses)
			}
			if e := appError(t, err); e.Type() != ErrTypeModuleUnavailable || e.NonRetryable() {
				t.Fatalf("err type %s (non-retryable %v), want a retryable %s", e.Type(), e.NonRetryable(), ErrTypeModuleUnavailable)
			}
		})
	}

	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	a := &Modules{Router: modules.NewRouter(modules.NewConfig()), Schemas: tools}
	env.RegisterActivity(a)
	_, err := env.ExecuteActivity(a.ExecuteTool, ExecuteInput{ToolID: "pets.list_pets", Inputs: map[string]any{}})
	if e := appError(t, err); e.Type() != ErrTypeNotExecutable {
		t.Fatalf("without a runtime: %v", err)
	}
}
