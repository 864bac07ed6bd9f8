package fulfil

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// StartOne starts workflow wf with input in under the fixed id on
// taskQueue, one run at a time (a reindex, an on-demand retrain): while a
// run of that id is open it refuses with fault.ErrConflict, saying the
// what is already running and where busy says to look. A finished run's id
// may be used again.
func StartOne(ctx context.Context, c interface {
	ExecuteWorkflow(ctx context.Context, options client.StartWorkflowOptions, workflow any, args ...any) (client.WorkflowRun, error)
}, id, taskQueue string, wf, in any, what, busy string) (client.WorkflowRun, error) {
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: taskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		// Without this the SDK answers a start of a running id with that
		// run's handle and no error, and a second start would succeed.
		WorkflowExecutionErrorWhenAlreadyStarted: true,
	}, wf, in)
	if err != nil {
		err = TemporalError("start "+what, err)
		if errors.Is(err, fault.ErrConflict) {
			err = fmt.Errorf("a %s is already running (%s): %w", what, busy, fault.ErrConflict)
		}
		return nil, err
	}
	return run, nil
}

// QueryProgress asks run runID of workflow id ("" for its latest run)
// for query and decodes the answer into out: the progress routes of the
// one-at-a-time workflows.
func QueryProgress(ctx context.Context, c interface {
	QueryWorkflow(ctx context.Context, workflowID, runID, queryType string, args ...any) (converter.EncodedValue, error)
}, id, runID, query string, out any) error {
	v, err := c.QueryWorkflow(ctx, id, runID, query)
	if err != nil {
		return TemporalError(query+" of "+id, err)
	}
	if err := v.Get(out); err != nil {
		return fmt.Errorf("fulfil: decode %s of %s: %w", query, id, err)
	}
	return nil
}
