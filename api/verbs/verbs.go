package verbs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/workflows"
)

// Starter is the part of the Temporal SDK client the handlers use;
// client.Client satisfies it.
type Starter interface {
	ExecuteWorkflow(ctx context.Context, options client.StartWorkflowOptions, workflow any, args ...any) (client.WorkflowRun, error)
	GetWorkflow(ctx context.Context, workflowID, runID string) client.WorkflowRun
	DescribeWorkflowExecution(ctx context.Context, workflowID, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error)
	QueryWorkflow(ctx context.Context, workflowID, runID, queryType string, args ...any) (converter.EncodedValue, error)
}

// ToolGetter reads a tool so execute can answer 404/403 before starting a
// workflow; graph.Store satisfies it.
type ToolGetter interface {
	GetTool(ctx context.Context, id string) (graph.Tool, error)
}

// Limits of the wait query parameter.
const (
	MaxWait            = 120 * time.Second
	DefaultExecuteWait = 30 * time.Second
	// progressTimeout bounds the progress query: a run whose worker is down
	// cannot answer, and GET must not hang on it.
	progressTimeout = 2 * time.Second
)

// Config tunes a Handler.
type Config struct {
	// TaskQueue defaults to workflows.TaskQueue.
	TaskQueue string
	// Namespace names the namespace in UI links; default "default".
	Namespace string
	// UIBaseURL is the Temporal Web UI (http://127.0.0.1:8233); empty
	// leaves uiUrl out of responses.
	UIBaseURL string
	// DefaultThreshold applies to requests that set no threshold: the
	// substitution threshold calibrated for the server's embedder. 0 leaves
	// the workflow's own default (workflows.DefaultThreshold).
	DefaultThreshold float64
}

// Handler serves the verbs, tool-execution and module-refresh routes.
type Handler struct {
	temporal Starter
	tools    ToolGetter
	cfg      Config
}

// New returns a Handler. tools may be nil: execute then leaves the known
// and visible checks to the workflow's activity.
func New(c Starter, tools ToolGetter, cfg Config) *Handler {
	if c == nil {
		panic("verbs: nil Starter")
	}
	if cfg.TaskQueue == "" {
		cfg.TaskQueue = workflows.TaskQueue
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	cfg.UIBaseURL = strings.TrimRight(cfg.UIBaseURL, "/")
	return &Handler{temporal: c, tools: tools, cfg: cfg}
}

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

// VerbRequest is the body of POST /verbs.
type VerbRequest struct {
	Verb        string         `json:"verb"`
	Description string         `json:"description,omitempty"`
	Inputs      map[string]any `json:"inputs,omitempty"`
	Context     string         `json:"context,omitempty"`
	Options     VerbOptions    `json:"options,omitempty"`
}

// VerbOptions are the caller-settable workflows.NovelVerbOptions.
type VerbOptions struct {
	Threshold   float64 `json:"threshold,omitempty"`
	MaxDepth    int     `json:"maxDepth,omitempty"`
	DryRun      bool    `json:"dryRun,omitempty"`
	SearchLimit int     `json:"searchLimit,omitempty"`
}

// Run is the response of the verbs routes.
type Run struct {
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId"`
	UIURL      string `json:"uiUrl,omitempty"`
	// Status is running, completed, failed, canceled, terminated,
	// timed_out or continued_as_new.
	Status string `json:"status"`
	// Succeeded is true only for a run that completed: a run that ended in
	// failure (LLMUnavailable, SchemaMismatch, …) answers 200 — the request
	// worked, the outcome is known — with succeeded false, status failed
	// and errorType. The X-Run-Status header carries Status as well.
	Succeeded bool                `json:"succeeded"`
	Progress  *workflows.Progress `json:"progress,omitempty"`
	Result    any                 `json:"result,omitempty"`
	Error     string              `json:"error,omitempty"`
	ErrorType string              `json:"errorType,omitempty"`
}

var verbRe = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`)

const maxVerbLen = 64

// Validate checks the request, naming every offending field.
func (r VerbRequest) Validate() error {
	v := &fault.ValidationError{}
	switch {
	case r.Verb == "":
		v.Add("verb", "is required")
	case len(r.Verb) > maxVerbLen:
		v.Add("verb", "must be at most %d characters", maxVerbLen)
	case !verbRe.MatchString(r.Verb):
		v.Add("verb", "must be UPPER_SNAKE_CASE (e.g. CONVERT_CURRENCY), got %q", r.Verb)
	}
	if t := r.Options.Threshold; t < 0 || t > 1 {
		v.Add("options.threshold", "must be between 0 and 1, got %g", t)
	}
	if d := r.Options.MaxDepth; d < 0 || d > 10 {
		v.Add("options.maxDepth", "must be between 0 and 10, got %d", d)
	}
	if n := r.Options.SearchLimit; n < 0 || n > 100 {
		v.Add("options.searchLimit", "must be between 0 and 100, got %d", n)
	}
	return v.Err()
}

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
	threshold := req.Options.Threshold
	if threshold == 0 {
		threshold = h.cfg.DefaultThreshold
	}
	in := workflows.NovelVerbInput{
		Verb: req.Verb, Description: req.Description, Inputs: req.Inputs, Context: req.Context, Caller: caller,
		Options: workflows.NovelVerbOptions{Threshold: threshold, MaxDepth: req.Options.MaxDepth,
			DryRun: req.Options.DryRun, SearchLimit: req.Options.SearchLimit},
	}
	ctx := c.Request.Context()
	run, err := h.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        "verb-" + req.Verb + "-" + shortID(),
		TaskQueue: h.cfg.TaskQueue,
		// Set at start so the run is findable by verb before its first
		// workflow task; the workflow upserts branch and tool as it goes.
		TypedSearchAttributes: temporal.NewSearchAttributes(workflows.SAVerb.ValueSet(req.Verb)),
		// When a worker shares this client (toolsmith dev), the first
		// workflow task comes back in the start response and skips a
		// matching round-trip; otherwise the SDK starts normally.
		EnableEagerStart: true,
	}, workflows.NovelVerbWorkflow, in)
	if err != nil {
		httpx.Error(c, temporalError("start "+req.Verb, err))
		return
	}
	out := Run{WorkflowID: run.GetID(), RunID: run.GetRunID(), UIURL: h.uiURL(run.GetID(), run.GetRunID()), Status: workflows.StatusRunning}
	h.respond(c, ctx, run, wait, &out, new(workflows.NovelVerbResult))
}

func (h *Handler) getVerb(c *gin.Context) {
	id := c.Param("id")
	runID := c.Query("runId")
	ctx := c.Request.Context()
	desc, err := h.temporal.DescribeWorkflowExecution(ctx, id, runID)
	if err != nil {
		httpx.Error(c, temporalError("describe "+id, err))
		return
	}
	info := desc.GetWorkflowExecutionInfo()
	if name := info.GetType().GetName(); name != "NovelVerbWorkflow" {
		httpx.Error(c, fmt.Errorf("verbs: %q is a %s run, not a verb fulfilment: %w", id, name, fault.ErrNotFound))
		return
	}
	runID = info.GetExecution().GetRunId()
	out := Run{WorkflowID: id, RunID: runID, UIURL: h.uiURL(id, runID), Status: statusName(info.GetStatus())}
	if out.Status == workflows.StatusRunning {
		qctx, cancel := context.WithTimeout(ctx, progressTimeout)
		defer cancel()
		if v, err := h.temporal.QueryWorkflow(qctx, id, runID, workflows.ProgressQuery); err == nil {
			var p workflows.Progress
			if v.Get(&p) == nil {
				out.Progress = &p
			}
		}
		writeRun(c, http.StatusOK, &out)
		return
	}
	run := h.temporal.GetWorkflow(ctx, id, runID)
	var res workflows.NovelVerbResult
	h.collect(ctx, run, &out, &res)
	writeRun(c, http.StatusOK, &out)
}

// ExecuteRequest is the body of POST /tools/:toolId/execute.
type ExecuteRequest struct {
	Inputs map[string]any `json:"inputs"`
	DryRun bool           `json:"dryRun,omitempty"`
}

// HeaderIdempotencyKey makes a repeated execute request return the first
// run instead of calling the tool again.
const HeaderIdempotencyKey = "Idempotency-Key"

var keyRe = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

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
	key := c.GetHeader(HeaderIdempotencyKey)
	if key != "" && !keyRe.MatchString(key) {
		httpx.Error(c, fault.Malformed(HeaderIdempotencyKey, "must be 1-128 characters of A-Z a-z 0-9 . _ : -"))
		return
	}
	ctx := c.Request.Context()
	if err := h.checkTool(ctx, toolID, caller); err != nil {
		httpx.Error(c, err)
		return
	}
	opts := client.StartWorkflowOptions{
		ID:                    "tool-" + toolID + "-" + shortID(),
		TaskQueue:             h.cfg.TaskQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(workflows.SAToolID.ValueSet(toolID)),
	}
	if key != "" {
		// Same key, same workflow ID: ExecuteWorkflow returns the existing
		// run (WorkflowExecutionErrorWhenAlreadyStarted is false) and the
		// reuse policy stops a finished one from running again.
		opts.ID = "tool-" + toolID + "-" + key
		opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	}
	in := activities.ExecuteInput{ToolID: toolID, Inputs: req.Inputs, Caller: caller, DryRun: req.DryRun}
	run, err := h.temporal.ExecuteWorkflow(ctx, opts, workflows.ExecuteToolWorkflow, in)
	if err != nil {
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if !errors.As(err, &started) {
			httpx.Error(c, temporalError("execute "+toolID, err))
			return
		}
		run = h.temporal.GetWorkflow(ctx, opts.ID, "")
	}
	out := Run{WorkflowID: run.GetID(), RunID: run.GetRunID(), UIURL: h.uiURL(run.GetID(), run.GetRunID()), Status: workflows.StatusRunning}
	h.respond(c, ctx, run, wait, &out, new(activities.ExecuteOutput))
}

// checkTool answers unknown (404) and hidden (403) tools without a
// workflow. The activity checks again: it is the authority, this is the
// fast, clear answer.
func (h *Handler) checkTool(ctx context.Context, id string, caller access.Caller) error {
	if h.tools == nil {
		return nil
	}
	t, err := h.tools.GetTool(ctx, id)
	if errors.Is(err, graph.ErrNotFound) {
		return fmt.Errorf("verbs: tool %q: %w", id, fault.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("verbs: tool %q: %w", id, err)
	}
	if t.Status != "" && t.Status != graph.StatusActive {
		return fmt.Errorf("verbs: tool %q is %s: %w", id, t.Status, fault.ErrNotFound)
	}
	if why := caller.Reason(&t.ToolSummary); why != "" {
		return fmt.Errorf("verbs: tool %q is not available to this caller (%s): %w", id, why, fault.ErrForbidden)
	}
	return nil
}

func (h *Handler) refreshModules(c *gin.Context) {
	wait, err := parseWait(c, 0)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	ctx := c.Request.Context()
	run, err := h.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: "modules-refresh-" + shortID(), TaskQueue: h.cfg.TaskQueue,
	}, workflows.RefreshModulesWorkflow)
	if err != nil {
		httpx.Error(c, temporalError("refresh modules", err))
		return
	}
	out := Run{WorkflowID: run.GetID(), RunID: run.GetRunID(), UIURL: h.uiURL(run.GetID(), run.GetRunID()), Status: workflows.StatusRunning}
	h.respond(c, ctx, run, wait, &out, new(activities.DiscoverOutput))
}

// respond waits up to wait for run and writes 200 with its outcome, or 202
// while it is still running.
func (h *Handler) respond(c *gin.Context, ctx context.Context, run client.WorkflowRun, wait time.Duration, out *Run, result any) {
	if wait <= 0 {
		writeRun(c, http.StatusAccepted, out)
		return
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if !h.collect(wctx, run, out, result) {
		if ctx.Err() != nil {
			return // the client went away
		}
		out.Status = workflows.StatusRunning
		writeRun(c, http.StatusAccepted, out)
		return
	}
	writeRun(c, http.StatusOK, out)
}

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

// collect waits for run's outcome and fills out. It reports false when ctx
// ended first (the run is still going).
func (h *Handler) collect(ctx context.Context, run client.WorkflowRun, out *Run, result any) bool {
	err := run.Get(ctx, result)
	if err == nil {
		out.Status, out.Result = workflows.StatusCompleted, result
		return true
	}
	if ctx.Err() != nil || waitEnded(err) {
		return false
	}
	out.Status, out.Error = workflows.StatusFailed, err.Error()
	var appErr *temporal.ApplicationError
	var canceled *temporal.CanceledError
	var terminated *temporal.TerminatedError
	var timeout *temporal.TimeoutError
	switch {
	case errors.As(err, &appErr):
		out.ErrorType, out.Error = appErr.Type(), appErr.Error()
		// NovelVerbWorkflow attaches its partial result to the failure.
		if appErr.HasDetails() && appErr.Details(result) == nil {
			out.Result = result
		}
	case errors.As(err, &canceled):
		out.Status = "canceled"
	case errors.As(err, &terminated):
		out.Status = "terminated"
	case errors.As(err, &timeout):
		out.Status = "timed_out"
	}
	return true
}

// waitEnded reports whether err is the long poll for the outcome running
// out of time rather than an outcome. The server can answer
// DeadlineExceeded a moment before the caller's own deadline has passed.
func waitEnded(err error) bool {
	var deadline *serviceerror.DeadlineExceeded
	var canceled *serviceerror.Canceled
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.As(err, &deadline) || errors.As(err, &canceled)
}

func (h *Handler) uiURL(id, runID string) string {
	if h.cfg.UIBaseURL == "" {
		return ""
	}
	return fmt.Sprintf("%s/namespaces/%s/workflows/%s/%s/history", h.cfg.UIBaseURL,
		url.PathEscape(h.cfg.Namespace), url.PathEscape(id), url.PathEscape(runID))
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

func statusName(s enumspb.WorkflowExecutionStatus) string {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return workflows.StatusRunning
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return workflows.StatusCompleted
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		return workflows.StatusFailed
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return "canceled"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return "terminated"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return "timed_out"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return "continued_as_new"
	default:
		return "unknown"
	}
}

// temporalError maps SDK errors onto the fault kinds httpx understands.
func temporalError(op string, err error) error {
	var notFound *serviceerror.NotFound
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	switch {
	case errors.As(err, &notFound):
		return fmt.Errorf("verbs: %s: %w: %w", op, fault.ErrNotFound, err)
	case errors.As(err, &started):
		return fmt.Errorf("verbs: %s: %w: %w", op, fault.ErrConflict, err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("verbs: %s: %w: %w", op, fault.ErrUnavailable, err)
	default:
		var unavailable *serviceerror.Unavailable
		if errors.As(err, &unavailable) {
			return fmt.Errorf("verbs: %s: temporal: %w: %w", op, fault.ErrUnavailable, err)
		}
		return fmt.Errorf("verbs: %s: %w", op, err)
	}
}

func shortID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
