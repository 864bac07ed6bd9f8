package ranking

import (
	"context"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/toolsmith/toolsmith/api/verbs"
	"github.com/toolsmith/toolsmith/workflows"
)

// RetrainScheduleID is the schedule that runs RetrainWorkflow.
const RetrainScheduleID = "toolsmith-ranking-retrain"

// EnsureRetrainSchedule creates, or updates in place, the schedule that
// retrains the ranking every `every` (the analytics' cadence,
// --analytics-every) on taskQueue (workflows.TaskQueue when empty). It is
// a schedule of its own rather than a child of the analytics run, so a
// failed retrain does not fail the analytics and each can be paused or
// triggered alone.
func EnsureRetrainSchedule(ctx context.Context, c verbs.Scheduler, every time.Duration, taskQueue string) error {
	if taskQueue == "" {
		taskQueue = workflows.TaskQueue
	}
	return verbs.EnsureIntervalSchedule(ctx, c, RetrainScheduleID, every, &client.ScheduleWorkflowAction{
		ID: "ranking-retrain-scheduled", Workflow: workflows.RetrainWorkflow, TaskQueue: taskQueue,
		Args: []any{workflows.RetrainInput{}},
	})
}
