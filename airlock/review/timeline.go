package review

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/workflows"
)

// historian is the part of the SDK client a review's timeline and the
// ended reviews read; a client without it (a test fake) has no timelines.
type historian interface {
	GetWorkflowHistory(ctx context.Context, workflowID, runID string, isLongPoll bool, filterType enumspb.HistoryEventFilterType) client.HistoryEventIterator
}

// closedReview reads a closed review's prepared review and its outcome
// from its history; ok is false when the history cannot be read.
func (s *Service) closedReview(ctx context.Context, id, runID string) (airlock.Review, *workflows.AirlockOutcome, bool) {
	hist, ok := s.temporal.(historian)
	if !ok {
		return airlock.Review{}, nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	it := hist.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	dc := converter.GetDefaultDataConverter()
	prepare := int64(-1)
	var rev airlock.Review
	var out *workflows.AirlockOutcome
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return airlock.Review{}, nil, false
		}
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == "PrepareReview" {
				prepare = ev.GetEventId()
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			a := ev.GetActivityTaskCompletedEventAttributes()
			if a.GetScheduledEventId() == prepare {
				_ = dc.FromPayloads(a.GetResult(), &rev)
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
			var o workflows.AirlockOutcome
			if err := dc.FromPayloads(ev.GetWorkflowExecutionCompletedEventAttributes().GetResult(), &o); err == nil {
				out = &o
			}
		}
	}
	return rev, out, true
}

// activitySteps names the review's activities for its timeline.
var activitySteps = map[string]struct{ kind, what string }{
	"PrepareReview": {"scan", "preflight scan of the spec"},
	"OnboardSpec":   {"build", "wrapper generated, built, tested and registered"},
	"CloseGaps":     {"step", "gaps closed"},
	"SetSpecStatus": {"step", "spec status recorded"},
}

// Timeline tells a review's steps from its Temporal history (which is the
// record of what it did). Unknown id, or a workflow that is no review:
// ErrNotFound.
func (s *Service) Timeline(ctx context.Context, id string) ([]TimelineEntry, error) {
	hist, ok := s.temporal.(historian)
	if !ok {
		return nil, fmt.Errorf("review timelines: %w: this server's Temporal client reads no history", fault.ErrUnavailable)
	}
	it := hist.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	scheduled := map[int64]*historypb.HistoryEvent{}
	out := []TimelineEntry{}
	dc := converter.GetDefaultDataConverter()
	for it.HasNext() {
		ev, err := it.Next()
		var nf *serviceerror.NotFound
		switch {
		case errors.As(err, &nf):
			return nil, fmt.Errorf("no review %q: %w", id, fault.ErrNotFound)
		case err != nil:
			return nil, fmt.Errorf("review %s history: %w: %w", id, fault.ErrUnavailable, err)
		}
		if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED &&
			ev.GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName() != "AirlockWorkflow" {
			return nil, fmt.Errorf("no review %q: %w", id, fault.ErrNotFound) // another kind of workflow
		}
		at := ev.GetEventTime().AsTime().UTC()
		step := func(schedID int64, outcome, detail string) {
			s, ok := scheduled[schedID]
			if !ok {
				return
			}
			name := s.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
			e := TimelineEntry{At: at, Kind: "step", What: name, Outcome: outcome, Detail: detail, Ms: at.Sub(s.GetEventTime().AsTime()).Milliseconds()}
			if n, ok := activitySteps[name]; ok {
				e.Kind, e.What = n.kind, n.what
			}
			out = append(out, e)
		}
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			out = append(out, TimelineEntry{At: at, Kind: "opened", What: "review opened by a source scan"})
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			scheduled[ev.GetEventId()] = ev
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			step(ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId(), "completed", "")
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			a := ev.GetActivityTaskFailedEventAttributes()
			step(a.GetScheduledEventId(), "failed", a.GetFailure().GetMessage())
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
			step(ev.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId(), "timed out", "")
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
			a := ev.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest()
			if a.GetInput().GetName() != workflows.UpdateDecide {
				continue
			}
			var d workflows.Decision
			if err := dc.FromPayloads(a.GetInput().GetArgs(), &d); err != nil {
				continue
			}
			switch {
			case d.Approve != nil:
				out = append(out, TimelineEntry{At: at, Kind: "decision", What: "approved", Who: d.Approve.Reviewer})
			case d.Reject != nil:
				out = append(out, TimelineEntry{At: at, Kind: "decision", What: "rejected", Who: d.Reject.Reviewer, Detail: d.Reject.Reason})
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			a := ev.GetWorkflowExecutionSignaledEventAttributes()
			switch name := a.GetSignalName(); name {
			case workflows.SignalApprove, workflows.SignalReject:
				out = append(out, TimelineEntry{At: at, Kind: "decision", What: name + " (signal)", Who: a.GetIdentity()})
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
			out = append(out, TimelineEntry{At: at, Kind: "ended", What: "review ended", Outcome: "completed"})
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
			out = append(out, TimelineEntry{At: at, Kind: "ended", What: "review failed", Outcome: "failed",
				Detail: ev.GetWorkflowExecutionFailedEventAttributes().GetFailure().GetMessage()})
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
			out = append(out, TimelineEntry{At: at, Kind: "ended", What: "review stopped", Outcome: "stopped"})
		}
	}
	return out, nil
}
