package verbs

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/client"

	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/fulfil"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/workflows"
)

// The request, run and configuration types are the fulfil service's; the
// aliases keep this package's API.
type (
	Starter        = fulfil.Starter
	ToolGetter     = fulfil.ToolGetter
	Config         = fulfil.Config
	Run            = fulfil.Run
	VerbRequest    = fulfil.VerbRequest
	VerbOptions    = fulfil.VerbOptions
	ExecuteRequest = fulfil.ExecuteRequest
)

// Limits of the wait query parameter.
const (
	MaxWait            = 120 * time.Second
	DefaultExecuteWait = 30 * time.Second
)

// Handler serves the verbs, tool-execution and module-refresh routes.
type Handler struct {
	svc      *fulfil.Service
	temporal Starter
	cfg      Config
}

// New returns a Handler. tools may be nil: execute then leaves the known
// and visible checks to the workflow's activity.
func New(c Starter, tools ToolGetter, cfg Config) *Handler {
	svc := fulfil.New(c, tools, cfg)
	return &Handler{svc: svc, temporal: c, cfg: svc.Config()}
}

// Service is the fulfil service the handler runs on (for other edges).
func (h *Handler) Service() *fulfil.Service { return h.svc }

// Mount adds the routes to the /api/v1 group.
func (h *Handler) Mount(v1 *gin.RouterGroup) {
	v1.POST("/verbs", h.startVerb)
	v1.GET("/verbs/:id", h.getVerb)
	v1.POST("/tools/:toolId/execute", h.executeTool)
	v1.POST("/modules/refresh", h.refreshModules)
	v1.POST("/tools/admin/reindex", h.startReindex)
	v1.GET("/tools/admin/reindex/:id", h.reindexProgress)
}

var _ httpx.Mounter = (*Handler)(nil)

func (h *Handler) startVerb(c *gin.Context) {
	wait, err := parseWait(c, 0)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	var req VerbRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		httpx.Error(c, err)
		return
	}
	if err := req.Validate(); err != nil {
		httpx.Error(c, err)
		return
	}
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	ctx := c.Request.Context()
	key, err := idempotencyKey(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	run, out, err := h.svc.StartVerb(ctx, caller, req, key)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	h.respond(c, ctx, run, wait, &out, new(workflows.NovelVerbResult))
}

// getVerb answers a verb run to the caller that started it (or an admin);
// the ownership rule is the fulfil service's, shared with every edge.
func (h *Handler) getVerb(c *gin.Context) {
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	out, err := h.svc.GetVerb(c.Request.Context(), caller, c.Param("id"), c.Query("runId"))
	if err != nil {
		httpx.Error(c, err)
		return
	}
	writeRun(c, http.StatusOK, &out)
}

// HeaderIdempotencyKey makes a repeated execute or verb request of the
// same caller return the first run instead of running again (the key is
// scoped to the caller and needs a credential; see fulfil.StartExecute
// and fulfil.StartVerb).
const HeaderIdempotencyKey = fulfil.IdempotencyKeyField

// idempotencyKey reads the Idempotency-Key header, which a request sends
// at most once and not empty: two (or more), or an empty one, are a 400
// naming it, never silently read as the first or as no key.
func idempotencyKey(c *gin.Context) (string, error) {
	keys := c.Request.Header.Values(HeaderIdempotencyKey)
	if len(keys) > 1 {
		return "", fault.Malformed(HeaderIdempotencyKey, "must be sent once, got %d headers", len(keys))
	}
	if len(keys) == 0 {
		return "", nil
	}
	if strings.TrimSpace(keys[0]) == "" {
		return "", fault.Malformed(HeaderIdempotencyKey, "is empty; send a key, or leave the header out")
	}
	return keys[0], nil
}

// executeTool runs the tool through ExecuteToolWorkflow rather than calling
// the module from the API: the call then gets the activity's retries with
// one idempotency key, survives an API restart, and leaves an audit trail
// (with ToolsmithToolId) in the Temporal UI, for ~30 ms of overhead.
func (h *Handler) executeTool(c *gin.Context) {
	toolID := c.Param("toolId")
	wait, err := parseWait(c, DefaultExecuteWait)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	var req ExecuteRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		httpx.Error(c, err)
		return
	}
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	ctx := c.Request.Context()
	key, err := idempotencyKey(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	run, out, err := h.svc.StartExecute(ctx, caller, toolID, req, key)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	h.respond(c, ctx, run, wait, &out, new(workflows.ExecuteToolResult))
}

func (h *Handler) refreshModules(c *gin.Context) {
	wait, err := parseWait(c, 0)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	ctx := c.Request.Context()
	run, err := h.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: "modules-refresh-" + fulfil.NewID(), TaskQueue: h.cfg.TaskQueue,
	}, workflows.RefreshModulesWorkflow)
	if err != nil {
		httpx.Error(c, fulfil.TemporalError("refresh modules", err))
		return
	}
	out := Run{WorkflowID: run.GetID(), RunID: run.GetRunID(), UIURL: h.svc.UIURL(run.GetID(), run.GetRunID()), Status: workflows.StatusRunning}
	h.respond(c, ctx, run, wait, &out, new(workflows.RefreshModulesResult))
}

// respond waits up to wait for run and writes 200 with its outcome, or 202
// while it is still running. A run that has already ended (an
// idempotency key's repeat joining a finished run) answers its outcome
// whatever the wait: reading it does not wait.
func (h *Handler) respond(c *gin.Context, ctx context.Context, run client.WorkflowRun, wait time.Duration, out *Run, result any) {
	if out.Status != workflows.StatusRunning {
		wait = max(wait, endedWait)
	}
	if wait <= 0 {
		writeRun(c, http.StatusAccepted, out)
		return
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if !h.svc.Collect(wctx, run, out, result) {
		if ctx.Err() != nil {
			return // the client went away
		}
		out.Status = workflows.StatusRunning
		writeRun(c, http.StatusAccepted, out)
		return
	}
	writeRun(c, http.StatusOK, out)
}

// endedWait bounds reading the outcome of a run that has already ended.
const endedWait = 10 * time.Second

// RunStatusHeader carries a run's status (running, completed, failed, …)
// on every verbs response, so a client sees a failed outcome at a glance.
const RunStatusHeader = "X-Run-Status"

// writeRun writes a run: 202 while running, 200 once it has an outcome,
// whether that outcome is success or failure (see Run.Succeeded).
func writeRun(c *gin.Context, code int, out *Run) {
	out.Succeeded = out.Status == workflows.StatusCompleted
	c.Header(RunStatusHeader, out.Status)
	httpx.OK(c, code, out)
}

// parseWait reads ?wait= as a Go duration (30s, 1m), capped at MaxWait.
func parseWait(c *gin.Context, def time.Duration) (time.Duration, error) {
	raw, ok := c.GetQuery("wait")
	if !ok || raw == "" {
		return def, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil {
		return 0, fault.Malformed("wait", "must be a duration such as 30s, got %q", raw)
	}
	if d < 0 || d > MaxWait {
		return 0, fault.Malformed("wait", "must be between 0s and %s, got %s", MaxWait, d)
	}
	return d, nil
}
