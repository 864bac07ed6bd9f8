package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"go.temporal.io/sdk/workflow"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/activities"
)

// ExecuteToolInput is ExecuteToolWorkflow's input: one tool, the caller's
// inputs, and who calls.
type ExecuteToolInput struct {
	ToolID string         `json:"toolId"`
	Inputs map[string]any `json:"inputs"`
	Caller Caller         `json:"caller"`
	// DryRun maps and validates the inputs but does not call the module.
	DryRun bool `json:"dryRun,omitempty"`
}

// ExecuteToolResult is a successful execution.
type ExecuteToolResult struct {
	ToolID    string            `json:"toolId"`
	Module    string            `json:"module,omitempty"`
	Arguments map[string]any    `json:"arguments"`
	Renamed   map[string]string `json:"renamed,omitempty"`
	Unused    []string          `json:"unused,omitempty"`
	// Output is the tool's result (decoded JSON); nil on a dry run.
	Output any  `json:"output,omitempty"`
	DryRun bool `json:"dryRun,omitempty"`
	// State is the state the caller moves to: the tool's state when it has
	// one and ran successfully, else the caller's state.
	State      string `json:"state"`
	DurationMs int64  `json:"durationMs"`
	// IdempotencyKey is the key the module saw.
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
}

func executeToolResult(o activities.ExecuteOutput) ExecuteToolResult {
	return ExecuteToolResult{ToolID: o.ToolID, Module: o.Module, Arguments: o.Arguments, Renamed: o.Renamed, Unused: o.Unused,
		Output: o.Output, DryRun: o.DryRun, State: o.State, DurationMs: o.DurationMs, IdempotencyKey: o.IdempotencyKey}
}

// ExecuteToolWorkflow runs one known tool (POST /api/v1/tools/{id}/execute).
// Routing it through a workflow rather than calling the module from the API
// buys what fulfilment has: the call is retried on timeouts with one
// idempotency key (workflow ID + activity ID), survives an API or worker
// restart, and shows up in the Temporal UI with its search attributes. It
// costs one workflow round-trip (~30 ms on the in-process server). The API
// may set the workflow ID from a client request id to make a repeated
// request return the first result.
func ExecuteToolWorkflow(ctx workflow.Context, in ExecuteToolInput) (ExecuteToolResult, error) {
	_ = workflow.UpsertTypedSearchAttributes(ctx, SAToolID.ValueSet(in.ToolID), SABranch.ValueSet("execute"))
	var m *activities.Modules
	var out activities.ExecuteOutput
	ectx := workflow.WithActivityOptions(ctx, executeOptions)
	err := workflow.ExecuteActivity(ectx, m.ExecuteTool, activities.ExecuteInput{ToolID: in.ToolID, Inputs: in.Inputs, Caller: access.Caller(in.Caller), DryRun: in.DryRun,
		Attempts: executeOptions.RetryPolicy.MaximumAttempts}).Get(ctx, &out)
	if err != nil {
		if temporal.IsCanceledError(err) {
			// The caller gave up (an MCP notifications/cancelled, a cancel
			// request): the run ends canceled, not failed.
			return executeToolResult(out), err
		}
		return executeToolResult(out), activities.Fail(typeOr(err, activities.ErrTypeToolFailed), "execute %s: %s", in.ToolID, activities.Message(err))
	}
	return executeToolResult(out), nil
}

// RefreshModulesWorkflow re-discovers every configured module and registers
// its tools. The server runs it on a Temporal Schedule and on demand
// (POST /api/v1/modules/refresh).
func RefreshModulesWorkflow(ctx workflow.Context) (RefreshModulesResult, error) {
	var m *activities.Modules
	var out activities.DiscoverOutput
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		// One GET /manifest per module, 10 s each, plus registration.
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 3},
	})
	if err := workflow.ExecuteActivity(actx, m.DiscoverModules).Get(ctx, &out); err != nil {
		return refreshModulesResult(out), fmt.Errorf("workflows: refresh modules: %w", err)
	}
	return refreshModulesResult(out), nil
}

// RefreshModulesResult reports a module discovery: one report per
// configured module.
type RefreshModulesResult struct {
	Reports []ModuleReport `json:"reports"`
}

// ModuleReport is what discovery found at one module.
type ModuleReport struct {
	Module string   `json:"module"`
	URL    string   `json:"url"`
	Tools  []string `json:"tools,omitempty"`
	// Registered counts the tools registration accepted.
	Registered int `json:"registered"`
	// Error says why the module was skipped ("" when it answered).
	Error string `json:"error,omitempty"`
	// ToolErrors maps a tool id to why it was not registered.
	ToolErrors map[string]string `json:"toolErrors,omitempty"`
}

func refreshModulesResult(o activities.DiscoverOutput) RefreshModulesResult {
	out := RefreshModulesResult{}
	if o.Reports != nil {
		out.Reports = make([]ModuleReport, len(o.Reports))
	}
	for i, r := range o.Reports {
		out.Reports[i] = ModuleReport{Module: r.Module, URL: r.URL, Tools: r.Tools, Registered: r.Registered, Error: r.Error, ToolErrors: r.ToolErrors}
	}
	return out
}
