// Package ranking is the HTTP edge of the learned ranking model's
// versions (retrieval/retrain): list them with their figures, retrain on
// demand and roll back. Who may call each route (admins) is the server's
// authorization table (api.Rules); the two POSTs are audited.
//
// Routes, under /api/v1:
//
//	GET  /admin/ranking/versions                 limit ≤ 200 → versions newest first, with figures, and the promoted id ("none": the baseline)
//	POST /admin/ranking/retrain                  {"options", "gate"} (optional) → 202 with the run's ids and statusUrl; 409 while one runs
//	GET  /admin/ranking/retrain/:id              an on-demand retrain's progress (a run id, or "latest"): stage, version, figures, decision
//	POST /admin/ranking/versions/:id/rollback    promote that version, or "none" for the baseline
package ranking

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/fulfil"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/retrieval/retrain"
	"github.com/toolsmith/toolsmith/workflows"
)

// Starter starts workflows and queries their progress (a Temporal client).
type Starter interface {
	ExecuteWorkflow(ctx context.Context, options client.StartWorkflowOptions, workflow any, args ...any) (client.WorkflowRun, error)
	QueryWorkflow(ctx context.Context, workflowID, runID, queryType string, args ...any) (converter.EncodedValue, error)
}

// Handlers serves the ranking routes.
type Handlers struct {
	svc       *retrain.Service
	temporal  Starter
	taskQueue string
}

// New returns the handlers over the retrain service, and the Temporal
// client and task queue that run RetrainWorkflow (nil client: retrain on
// demand answers 503).
func New(svc *retrain.Service, temporal Starter, taskQueue string) *Handlers {
	if svc == nil {
		panic("ranking: nil retrain service")
	}
	if taskQueue == "" {
		taskQueue = workflows.TaskQueue
	}
	return &Handlers{svc: svc, temporal: temporal, taskQueue: taskQueue}
}

// Mount implements httpx.Mounter.
func (h *Handlers) Mount(v1 *gin.RouterGroup) {
	v1.GET("/admin/ranking/versions", h.list)
	v1.POST("/admin/ranking/retrain", h.retrain)
	v1.GET("/admin/ranking/retrain/:id", h.progress)
	v1.POST("/admin/ranking/versions/:id/rollback", h.rollback)
}

// Versions is the answer of GET /admin/ranking/versions.
type Versions struct {
	Versions []retrain.Version `json:"versions"`
	Count    int               `json:"count"`
	// Promoted is the promoted version's id, or "none" (the baseline).
	Promoted string `json:"promoted"`
}

func (h *Handlers) list(c *gin.Context) {
	limit, err := httpx.QueryInt(c, "limit", 50, 1, 200)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	vs, err := h.svc.List(c.Request.Context(), limit)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	promoted, err := h.svc.PromotedID(c.Request.Context())
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, Versions{Versions: vs, Count: len(vs), Promoted: promoted})
}

// Started is the answer of POST /admin/ranking/retrain.
type Started struct {
	ID    string `json:"id"`
	RunID string `json:"runId"`
	// StatusURL answers the run's progress (GET), and its outcome once
	// done.
	StatusURL string `json:"statusUrl"`
}

func (h *Handlers) retrain(c *gin.Context) {
	var in workflows.RetrainInput
	if c.Request.ContentLength != 0 {
		if err := httpx.BindJSON(c, &in); err != nil {
			httpx.Error(c, err)
			return
		}
	}
	if err := retrain.Options(in.Options).Validate(); err != nil {
		httpx.Error(c, err)
		return
	}
	if err := retrain.Gate(in.Gate).Validate(); err != nil {
		httpx.Error(c, err)
		return
	}
	if h.temporal == nil {
		httpx.Error(c, fmt.Errorf("ranking: no Temporal client to run the retrain: %w", fault.ErrUnavailable))
		return
	}
	run, err := fulfil.StartOne(c.Request.Context(), h.temporal, workflows.RetrainWorkflowID, h.taskQueue, workflows.RetrainWorkflow, in,
		"retrain", "GET /api/v1/admin/ranking/retrain/latest")
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusAccepted, Started{ID: run.GetID(), RunID: run.GetRunID(), StatusURL: "/api/v1/admin/ranking/retrain/" + run.GetRunID()})
}

// progress answers GET /admin/ranking/retrain/:id with the on-demand
// retrain's RetrainResult so far: its stage ("done" at the end), the
// candidate version, both figures and the gate's decision.
func (h *Handlers) progress(c *gin.Context) {
	runID, err := httpx.RunID("id", c.Param("id"), "retrain")
	if err != nil {
		httpx.Error(c, err)
		return
	}
	if h.temporal == nil {
		httpx.Error(c, fmt.Errorf("ranking: no Temporal client to ask: %w", fault.ErrUnavailable))
		return
	}
	var r workflows.RetrainResult
	if err := fulfil.QueryProgress(c.Request.Context(), h.temporal, workflows.RetrainWorkflowID, runID, workflows.RetrainQuery, &r); err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, r)
}

// RolledBack is the answer of a rollback.
type RolledBack struct {
	Promoted string `json:"promoted"`
}

// rollback takes no body fields: a body, when sent, must be an empty
// object, so a field the route does not have is a 400 naming it, as on
// every other route, not silently ignored.
func (h *Handlers) rollback(c *gin.Context) {
	id := c.Param("id")
	if c.Request.ContentLength != 0 {
		var none struct{}
		if err := httpx.BindJSON(c, &none); err != nil {
			httpx.Error(c, err)
			return
		}
	}
	if err := h.svc.Rollback(c.Request.Context(), id); err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, RolledBack{Promoted: id})
}
