package verbs

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/toolsmith/toolsmith/workflows"
)

// RefreshScheduleID is the ID of the module discovery schedule.
const RefreshScheduleID = "toolsmith-modules-refresh"

// DefaultRefreshEvery is how often the schedule runs module discovery.
const DefaultRefreshEvery = 10 * time.Minute

// Scheduler is the part of the SDK client EnsureRefreshSchedule uses;
// client.Client satisfies it (ScheduleClient returns client.ScheduleClient).
type Scheduler interface {
	ScheduleClient() client.ScheduleClient
}

// EnsureRefreshSchedule creates the Temporal Schedule that runs
// RefreshModulesWorkflow every `every` (DefaultRefreshEvery when zero) on
// taskQueue (workflows.TaskQueue when empty). It is idempotent: when the
// schedule exists its interval and action are updated in place, so calling
// it at every start is safe and a changed interval takes effect.
func EnsureRefreshSchedule(ctx context.Context, c Scheduler, every time.Duration, taskQueue string) error {
	if every == 0 {
		every = DefaultRefreshEvery
	}
	if taskQueue == "" {
		taskQueue = workflows.TaskQueue
	}
	return EnsureIntervalSchedule(ctx, c, RefreshScheduleID, every, &client.ScheduleWorkflowAction{
		ID:        "modules-refresh-scheduled",
		Workflow:  workflows.RefreshModulesWorkflow,
		TaskQueue: taskQueue,
	})
}

// EnsureIntervalSchedule creates, or updates in place, the schedule id that
// starts action every `every` (at least one minute), skipping a tick while
// the previous run is still going.
func EnsureIntervalSchedule(ctx context.Context, c Scheduler, id string, every time.Duration, action *client.ScheduleWorkflowAction) error {
	if every < time.Minute {
		return fmt.Errorf("verbs: schedule %s: interval %s is below one minute", id, every)
	}
	spec := client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: every}}}
	sc := c.ScheduleClient()
	_, err := sc.Create(ctx, client.ScheduleOptions{
		ID:     id,
		Spec:   spec,
		Action: action,
		// A slow run must not pile up runs.
		Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
	})
	if err == nil {
		return nil
	}
	if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return fmt.Errorf("verbs: create schedule %s: %w", id, err)
	}
	err = sc.GetHandle(ctx, id).Update(ctx, client.ScheduleUpdateOptions{
		DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
			s := in.Description.Schedule
			s.Spec = &spec
			s.Action = action
			return &client.ScheduleUpdate{Schedule: &s}, nil
		},
	})
	if err != nil {
		return fmt.Errorf("verbs: update schedule %s: %w", id, err)
	}
	return nil
}
