package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/toolsmith/toolsmith/api/verbs"
)

func TestRefreshScheduleIdempotent(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := verbs.EnsureRefreshSchedule(ctx, e.client, 0, e.queue); err != nil {
		t.Fatal(err)
	}
	h := e.client.ScheduleClient().GetHandle(ctx, verbs.RefreshScheduleID)
	t.Cleanup(func() { _ = h.Delete(context.Background()) })
	every := func() time.Duration {
		d, err := h.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if iv := d.Schedule.Spec.Intervals; len(iv) == 1 {
			return iv[0].Every
		}
		t.Fatalf("intervals = %+v", d.Schedule.Spec.Intervals)
		return 0
	}
	if got := every(); got != verbs.DefaultRefreshEvery {
		t.Errorf("interval = %s, want %s", got, verbs.DefaultRefreshEvery)
	}
	// A second call with another interval updates the existing schedule.
	if err := verbs.EnsureRefreshSchedule(ctx, e.client, 3*time.Minute, e.queue); err != nil {
		t.Fatalf("second EnsureRefreshSchedule: %v", err)
	}
	if got := every(); got != 3*time.Minute {
		t.Errorf("interval after update = %s, want 3m", got)
	}
	d, err := h.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Schedule.Action == nil {
		t.Fatal("schedule has no action")
	}
	if err := verbs.EnsureRefreshSchedule(ctx, e.client, time.Second, e.queue); err == nil {
		t.Error("an interval under a minute was accepted")
	}
	// Triggering it runs module discovery on this env's worker.
	if err := h.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		resp, err := e.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: `WorkflowType = "RefreshModulesWorkflow" AND ExecutionStatus = "Completed"`,
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range resp.GetExecutions() {
			if strings.HasPrefix(ex.GetExecution().GetWorkflowId(), "modules-refresh-scheduled") {
				return nil
			}
		}
		return errors.New("the triggered schedule never completed a RefreshModulesWorkflow")
	})
}
