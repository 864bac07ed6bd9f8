package verbs

import (
	"net/http"

	"github.com/gin-gonic/gin"

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
	run, err := fulfil.StartOne(c.Request.Context(), h.temporal, ReindexWorkflowID, h.cfg.TaskQueue, workflows.ReindexWorkflow, in,
		"reindex", "GET /api/v1/tools/admin/reindex/latest")
	if err != nil {
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
	var p workflows.ReindexProgress
	if err := fulfil.QueryProgress(c.Request.Context(), h.temporal, ReindexWorkflowID, runID, workflows.ReindexQuery, &p); err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, p)
}
