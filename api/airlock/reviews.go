package airlock

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/workflows"
)

// decidedQuery lists reviews that ended: decided, timed out or failed.
const decidedQuery = "WorkflowType = 'AirlockWorkflow' AND ExecutionStatus != 'Running'"

// DecidedReview is one review that ended, with its decision.
type DecidedReview struct {
	ID       string `json:"id"`
	Title    string `json:"title,omitempty"`
	Location string `json:"location,omitempty"`
	// Status is the review's last state (onboarded, rejected, failed,
	// expired…), or Temporal's execution status when it cannot be read.
	Status   string    `json:"status"`
	Reviewer string    `json:"reviewer,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	ToolIDs  []string  `json:"toolIds,omitempty"`
	ClosedAt time.Time `json:"closedAt"`
}

// listDecided is GET /tools/reviews: reviews that ended, newest first,
// paged by Temporal's own page token (cursor).
func (h *Handler) listDecided(c *gin.Context) {
	ctx := c.Request.Context()
	limit, err := httpx.QueryInt(c, "limit", 25, 1, 100)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	var token []byte
	if raw := c.Query("cursor"); raw != "" {
		if token, err = base64.RawURLEncoding.DecodeString(raw); err != nil {
			httpx.Error(c, fault.Malformed("cursor", "must be the nextCursor of the previous page"))
			return
		}
	}
	resp, err := h.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: h.cfg.Namespace, Query: decidedQuery,
		PageSize: int32(limit), NextPageToken: token})
	if err != nil {
		httpx.Error(c, fmt.Errorf("list decided reviews: %w: %w", fault.ErrUnavailable, err))
		return
	}
	items := []DecidedReview{}
	for _, ex := range resp.GetExecutions() {
		id := ex.GetExecution().GetWorkflowId()
		d := DecidedReview{ID: id, Status: strings.ToLower(strings.TrimPrefix(ex.GetStatus().String(), "WORKFLOW_EXECUTION_STATUS_")), ClosedAt: ex.GetCloseTime().AsTime().UTC()}
		// A closed review is read from its history (its review and its
		// outcome), which needs no worker: a query would wait for one.
		if rev, out, ok := h.closedReview(ctx, id, ex.GetExecution().GetRunId()); ok {
			d.Title, d.Location = rev.Title, rev.Location
			if out != nil {
				d.Status, d.Reviewer, d.Reason, d.ToolIDs = out.Status, out.Reviewer, out.Reason, out.ToolIDs
				if d.Reason == "" && out.Stage != "" {
					d.Reason = "failed at " + out.Stage
				}
			}
		}
		items = append(items, d)
	}
	next := ""
	if t := resp.GetNextPageToken(); len(t) > 0 {
		next = base64.RawURLEncoding.EncodeToString(t)
	}
	httpx.OK(c, http.StatusOK, gin.H{"reviews": items, "count": len(items), "nextCursor": next})
}

// closedReview reads a closed review's prepared review and its outcome
// from its history; ok is false when the history cannot be read.
func (h *Handler) closedReview(ctx context.Context, id, runID string) (airlock.Review, *workflows.AirlockOutcome, bool) {
	hist, ok := h.temporal.(historian)
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

// historian is the part of the SDK client a review's timeline reads.
type historian interface {
	GetWorkflowHistory(ctx context.Context, workflowID, runID string, isLongPoll bool, filterType enumspb.HistoryEventFilterType) client.HistoryEventIterator
}

// TimelineEntry is one step of a review: opened, its preflight scan, a
// decision, the wrapper's build and tests, the end.
type TimelineEntry struct {
	At   time.Time `json:"at"`
	Kind string    `json:"kind"` // opened, scan, decision, build, step, ended
	// What says what happened, for people; Outcome is completed, failed,
	// timed out or "" for a point in time; Who is a decision's reviewer.
	What    string `json:"what"`
	Outcome string `json:"outcome,omitempty"`
	Who     string `json:"who,omitempty"`
	Detail  string `json:"detail,omitempty"`
	// Ms is how long a step ran.
	Ms int64 `json:"ms,omitempty"`
}

// activitySteps names the review's activities for its timeline.
var activitySteps = map[string]struct{ kind, what string }{
	"PrepareReview": {"scan", "preflight scan of the spec"},
	"OnboardSpec":   {"build", "wrapper generated, built, tested and registered"},
	"CloseGaps":     {"step", "gaps closed"},
	"SetSpecStatus": {"step", "spec status recorded"},
}

// timeline is GET /tools/pending/:id/timeline, read from the review's
// Temporal history (which is the record of what it did).
func (h *Handler) timeline(c *gin.Context) {
	hist, ok := h.temporal.(historian)
	if !ok {
		httpx.Error(c, fmt.Errorf("review timelines: %w: this server's Temporal client reads no history", fault.ErrUnavailable))
		return
	}
	ctx := c.Request.Context()
	id := c.Param("id")
	it := hist.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	scheduled := map[int64]*historypb.HistoryEvent{}
	out := []TimelineEntry{}
	dc := converter.GetDefaultDataConverter()
	for it.HasNext() {
		ev, err := it.Next()
		var nf *serviceerror.NotFound
		switch {
		case errors.As(err, &nf):
			httpx.Error(c, fmt.Errorf("no review %q: %w", id, fault.ErrNotFound))
			return
		case err != nil:
			httpx.Error(c, fmt.Errorf("review %s history: %w: %w", id, fault.ErrUnavailable, err))
			return
		}
		if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED &&
			ev.GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName() != "AirlockWorkflow" {
			httpx.Error(c, fmt.Errorf("no review %q: %w", id, fault.ErrNotFound)) // another kind of workflow
			return
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
	httpx.OK(c, http.StatusOK, gin.H{"id": id, "timeline": out})
}
