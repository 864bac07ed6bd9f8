package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"go.temporal.io/sdk/workflow"

	"github.com/toolsmith/toolsmith/activities"
)

// ExecuteToolWorkflow runs one known tool (POST /api/v1/tools/{id}/execute).
// Routing it through a workflow rather than calling the module from the API
// buys what fulfilment has: the call is retried on timeouts with one
// idempotency key (workflow ID + activity ID), survives an API or worker
// restart, and shows up in the Temporal UI with its search attributes. It
// costs one workflow round-trip (~30 ms on the in-process server). The API
// may set the workflow ID from a client request id to make a repeated
// request return the first result.
func ExecuteToolWorkflow(ctx workflow.Context, in activities.ExecuteInput) (activities.ExecuteOutput, error) {
	_ = workflow.UpsertTypedSearchAttributes(ctx, SAToolID.ValueSet(in.ToolID), SABranch.ValueSet("execute"))
	var m *activities.Modules
	var out activities.ExecuteOutput
	ectx := workflow.WithActivityOptions(ctx, executeOptions)
	if err := workflow.ExecuteActivity(ectx, m.ExecuteTool, in).Get(ctx, &out); err != nil {
		if temporal.IsCanceledError(err) {
			// The caller gave up (an MCP notifications/cancelled, a cancel
			// request): the run ends canceled, not failed.
			return out, err
		}
		return out, activities.Fail(typeOr(err, activities.ErrTypeToolFailed), "execute %s: %s", in.ToolID, activities.Message(err))
	}
	return out, nil
}

// RefreshModulesWorkflow re-discovers every configured module and registers
// its tools. The server runs it on a Temporal Schedule and on demand
// (POST /api/v1/modules/refresh).
func RefreshModulesWorkflow(ctx workflow.Context) (activities.DiscoverOutput, error) {
	var m *activities.Modules
	var out activities.DiscoverOutput
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		// One GET /manifest per module, 10 s each, plus registration.
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 3},
	})
	if err := workflow.ExecuteActivity(actx, m.DiscoverModules).Get(ctx, &out); err != nil {
		return out, fmt.Errorf("workflows: refresh modules: %w", err)
	}
	return out, nil
}
