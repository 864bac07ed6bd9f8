package verbs

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/fulfil"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/workflows"
)

// ReindexWorkflowID is the id of the reindex run; one runs at a time.
const ReindexWorkflowID = "tools-reindex"

// reindexStarted is the answer of POST /tools/admin/reindex.
type reindexStarted struct {
	ID        string `json:"id"`
	RunID     string `json:"runId"`
	StatusURL string `json:"statusUrl"`
	UIURL     string `json:"uiUrl,omitempty"`
}

// startReindex starts ReindexWorkflow (POST /tools/admin/reindex): 202 with
// the run to poll; 409 while another reindex runs.
func (h *Handler) startReindex(c *gin.Context) {
	var in workflows.ReindexInput
	if c.Request.ContentLength != 0 {
		if err := httpx.BindJSON(c, &in); err != nil {
			httpx.Error(c, err)
			return
		}
	}
	if in.BatchSize < 0 || in.BatchSize > 1000 {
		httpx.Error(c, fault.Invalid("batchSize", "must be between 1 and 1000 (0 takes 100), got %d", in.BatchSize))
		return
	}
	run, err := h.temporal.ExecuteWorkflow(c.Request.Context(), client.StartWorkflowOptions{
		ID: ReindexWorkflowID, TaskQueue: h.cfg.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		// Without this the SDK answers a start of a running id with that
		// run's handle and no error, and a second start would be 202.
		WorkflowExecutionErrorWhenAlreadyStarted: true,
	}, workflows.ReindexWorkflow, in)
	if err != nil {
		err = fulfil.TemporalError("start reindex", err)
		if errors.Is(err, fault.ErrConflict) {
			err = fmt.Errorf("a reindex is already running (GET /api/v1/tools/admin/reindex/latest): %w", fault.ErrConflict)
		}
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusAccepted, reindexStarted{
		ID: run.GetID(), RunID: run.GetRunID(), StatusURL: "/api/v1/tools/admin/reindex/" + run.GetRunID(),
		UIURL: h.svc.UIURL(run.GetID(), run.GetRunID()),
	})
}

// reindexProgress answers GET /tools/admin/reindex/:id (a run id, or
// "latest") with the run's progress: done, failed, total and status.
func (h *Handler) reindexProgress(c *gin.Context) {
	runID, err := httpx.RunID("id", c.Param("id"), "reindex")
	if err != nil {
		httpx.Error(c, err)
		return
	}
	v, err := h.temporal.QueryWorkflow(c.Request.Context(), ReindexWorkflowID, runID, workflows.ReindexQuery)
	if err != nil {
		httpx.Error(c, fulfil.TemporalError("reindex progress", err))
		return
	}
	var p workflows.ReindexProgress
	if err := v.Get(&p); err != nil {
		httpx.Error(c, fmt.Errorf("verbs: decode reindex progress: %w", err))
		return
	}
	httpx.OK(c, http.StatusOK, p)
}
