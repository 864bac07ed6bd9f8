// Package airlock serves the airlock's HTTP routes: tool
// sources, the pending reviews (running AirlockWorkflows) with their
// details, and approve/reject, which are Temporal updates of the review;
// GET /tools/reviews lists the reviews that ended, with their decisions,
// and GET /tools/pending/:id/timeline tells a review's steps from its
// Temporal history (reviews.go).
package airlock

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/workflows"
)

// Temporal is the part of the SDK client the handlers use.
type Temporal interface {
	ExecuteWorkflow(ctx context.Context, opts client.StartWorkflowOptions, workflow any, args ...any) (client.WorkflowRun, error)
	SignalWorkflow(ctx context.Context, workflowID, runID, signalName string, arg any) error
	UpdateWorkflow(ctx context.Context, opts client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error)
	QueryWorkflow(ctx context.Context, workflowID, runID, queryType string, args ...any) (converter.EncodedValue, error)
	ListWorkflow(ctx context.Context, req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error)
	GetWorkflow(ctx context.Context, workflowID, runID string) client.WorkflowRun
}

// Config configures the handlers.
type Config struct {
	TaskQueue     string
	Namespace     string
	ReviewTimeout time.Duration
}

// Notifications lists notifications, newest first.
type Notifications interface {
	List(limit int) []airlock.Notification
}

// Enabler re-enables the tools of an onboarded API.
type Enabler interface {
	Enable(ctx context.Context, slug, reason string) ([]string, error)
}

// Handler serves the airlock routes.
type Handler struct {
	temporal Temporal
	sources  graph.Definitions
	cfg      Config
	notes    Notifications
	enabler  Enabler
}

// WithOperations adds GET /notifications and POST /tools/:toolId/enable.
func (h *Handler) WithOperations(n Notifications, e Enabler) *Handler {
	h.notes, h.enabler = n, e
	return h
}

// New returns the airlock routes.
func New(t Temporal, sources graph.Definitions, cfg Config) *Handler {
	if cfg.TaskQueue == "" {
		cfg.TaskQueue = workflows.TaskQueue
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	return &Handler{temporal: t, sources: sources, cfg: cfg}
}

// Mount implements httpx.Mounter.
func (h *Handler) Mount(v1 *gin.RouterGroup) {
	v1.POST("/tools/sources", h.addSource)
	v1.GET("/tools/sources", h.listSources)
	v1.POST("/tools/sources/scan", h.scanAll)
	v1.DELETE("/tools/sources/:id", h.deleteSource)
	v1.GET("/tools/pending", h.listPending)
	v1.GET("/tools/pending/:id", h.getPending)
	v1.GET("/tools/pending/:id/timeline", h.timeline)
	v1.GET("/tools/reviews", h.listDecided)
	v1.POST("/tools/pending/:id/approve", h.approve)
	v1.POST("/tools/pending/:id/reject", h.reject)
	if h.notes != nil {
		v1.GET("/notifications", h.notifications)
	}
	if h.enabler != nil {
		v1.POST("/tools/:toolId/enable", h.enable)
	}
}

func (h *Handler) notifications(c *gin.Context) {
	limit, err := httpx.QueryInt(c, "limit", 100, 1, 1000)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	items := h.notes.List(limit)
	httpx.OK(c, http.StatusOK, gin.H{"notifications": items, "count": len(items)})
}

// enable re-activates the tools of the onboarded API that toolId belongs to
// (health checks disable them all together). Admins and owners only.
func (h *Handler) enable(c *gin.Context) {
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	// Who may re-enable (admins) is the route's rule in the server's
	// authorization table, checked before this handler runs.
	// toolId is one of the API's tools (<api>.<operation>) or the API's
	// name itself, as health-check notifications name it.
	slug, _, _ := strings.Cut(c.Param("toolId"), ".")
	if slug == "" {
		httpx.Error(c, fault.Malformed("toolId", "must be <api>.<operation> or <api>, got %q", c.Param("toolId")))
		return
	}
	ids, err := h.enabler.Enable(c.Request.Context(), slug, "re-enabled by "+caller.UserID)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, gin.H{"enabled": ids})
}

type addSourceRequest struct {
	Type     string `json:"type"`
	Location string `json:"location"`
	// Scan starts a scan of the new source at once (default true).
	Scan *bool `json:"scan,omitempty"`
}

func sourceID(location string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(location)))
	return "src-" + hex.EncodeToString(sum[:6])
}

// firstScanWait is how long adding a source waits, by default, for its
// first scan (?wait= overrides it; 0 answers at once).
const firstScanWait = 30 * time.Second

// addSource registers a source and, unless scan is false, scans it and
// waits up to ?wait= for that first scan, so the answer says whether the
// source could be fetched: "scan" holds the outcome (its report's error
// when the fetch failed) or status running when the wait ended first.
// The source stays registered either way (201); a failed fetch is also its
// lastError in GET /tools/sources.
func (h *Handler) addSource(c *gin.Context) {
	wait, err := waitParam(c, firstScanWait)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	var req addSourceRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		httpx.Error(c, err)
		return
	}
	src := airlock.Source{Type: req.Type, Location: strings.TrimSpace(req.Location)}
	if err := airlock.ValidateSource(src); err != nil {
		httpx.Error(c, err)
		return
	}
	if src.Type == "" {
		src.Type = airlock.SourceOpenAPI
	}
	ctx := c.Request.Context()
	id := sourceID(src.Location)
	if _, err := h.sources.GetSource(ctx, id); err == nil {
		httpx.Error(c, fmt.Errorf("source %s (%s) is already registered: %w", id, src.Location, fault.ErrConflict))
		return
	} else if !errors.Is(err, graph.ErrNotFound) {
		httpx.Error(c, err)
		return
	}
	rec := graph.Source{ID: id, Type: src.Type, Location: src.Location, CreatedAt: time.Now().UTC()}
	if err := h.sources.PutSource(ctx, rec); err != nil {
		httpx.Error(c, err)
		return
	}
	out := gin.H{"source": rec}
	if req.Scan == nil || *req.Scan {
		run, err := h.startScan(ctx, []string{id})
		if err != nil {
			httpx.Error(c, err)
			return
		}
		out["scanWorkflowId"] = run.GetID()
		out["scan"] = h.firstScan(ctx, run, wait)
		if after, err := h.sources.GetSource(ctx, id); err == nil {
			out["source"] = after // with the scan's specs count and lastError
		}
	}
	httpx.OK(c, http.StatusCreated, out)
}

// ScanOutcome is the first scan of a new source, as addSource reports it.
type ScanOutcome struct {
	// Status is completed, running (the wait ended first) or failed.
	Status string `json:"status"`
	// Report is the source's scan report; its error says why a fetch failed.
	Report *activities.ScanSourceOutput `json:"report,omitempty"`
	Error  string                       `json:"error,omitempty"`
}

func (h *Handler) firstScan(ctx context.Context, run client.WorkflowRun, wait time.Duration) ScanOutcome {
	if wait <= 0 {
		return ScanOutcome{Status: workflows.StatusRunning}
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var res workflows.ScanOutput
	if err := run.Get(wctx, &res); err != nil {
		if wctx.Err() != nil {
			return ScanOutcome{Status: workflows.StatusRunning}
		}
		return ScanOutcome{Status: workflows.StatusFailed, Error: err.Error()}
	}
	out := ScanOutcome{Status: workflows.StatusCompleted}
	if len(res.Reports) > 0 {
		out.Report = &res.Reports[0]
	}
	return out
}

func (h *Handler) startScan(ctx context.Context, ids []string) (client.WorkflowRun, error) {
	id := "scan-" + time.Now().UTC().Format("20060102T150405.000")
	if len(ids) == 1 {
		id = "scan-" + ids[0] + "-" + time.Now().UTC().Format("150405.000")
	}
	run, err := h.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: h.cfg.TaskQueue},
		workflows.ScanSourcesWorkflow, workflows.ScanInput{SourceIDs: ids, ReviewTimeout: h.cfg.ReviewTimeout})
	if err != nil {
		return nil, fmt.Errorf("start scan: %w: %w", fault.ErrUnavailable, err)
	}
	return run, nil
}

func (h *Handler) listSources(c *gin.Context) {
	srcs, err := h.sources.Sources(c.Request.Context())
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, gin.H{"sources": srcs})
}

func (h *Handler) scanAll(c *gin.Context) {
	run, err := h.startScan(c.Request.Context(), nil)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusAccepted, gin.H{"scanWorkflowId": run.GetID()})
}

func (h *Handler) deleteSource(c *gin.Context) {
	if err := h.sources.DeleteSource(c.Request.Context(), c.Param("id")); err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, gin.H{"deleted": c.Param("id")})
}

// pendingQuery lists running reviews.
// Builds from scratch (BuildToolWorkflow) answer the review query too, and
// are listed with the specs.
const pendingQuery = "WorkflowType IN ('AirlockWorkflow', 'BuildToolWorkflow') AND ExecutionStatus = 'Running'"

type pendingItem struct {
	ID         string `json:"id"`
	SpecHash   string `json:"specHash"`
	Title      string `json:"title"`
	Location   string `json:"location"`
	Operations int    `json:"operations"`
	Warnings   int    `json:"warnings"`
	// Slug is the wrapper name an approval gives the spec (reserved when
	// the review was prepared): its tools are named <slug>.<operation>.
	Slug string `json:"slug,omitempty"`
	// NameTakenBy is set when the name the spec's title gives is already
	// another spec's (the review's slug is then the name it gets);
	// NamePending when that spec is itself a pending review.
	NameTakenBy string `json:"nameTakenBy,omitempty"`
	NamePending bool   `json:"namePending,omitempty"`
	Status      string `json:"status"`
	StartedAt   string `json:"startedAt"`
}

func (h *Handler) listPending(c *gin.Context) {
	ctx := c.Request.Context()
	resp, err := h.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: h.cfg.Namespace, Query: pendingQuery, PageSize: 200})
	if err != nil {
		httpx.Error(c, fmt.Errorf("list pending reviews: %w: %w", fault.ErrUnavailable, err))
		return
	}
	items := []pendingItem{}
	for _, ex := range resp.GetExecutions() {
		id := ex.GetExecution().GetWorkflowId()
		st, err := h.state(ctx, id)
		if err != nil {
			continue // ended between the listing and the query
		}
		items = append(items, pendingItem{ID: id, SpecHash: st.Review.SpecHash, Title: st.Review.Title, Location: st.Review.Location,
			Operations: len(st.Review.Operations), Warnings: len(st.Review.Warnings), Slug: st.Review.Slug, NameTakenBy: st.Review.NameTakenBy, NamePending: st.Review.NamePending, Status: st.Status,
			StartedAt: ex.GetStartTime().AsTime().UTC().Format(time.RFC3339)})
	}
	httpx.OK(c, http.StatusOK, gin.H{"pending": items, "count": len(items)})
}

func (h *Handler) state(ctx context.Context, id string) (workflows.AirlockState, error) {
	v, err := h.temporal.QueryWorkflow(ctx, id, "", workflows.ReviewQuery)
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return workflows.AirlockState{}, fmt.Errorf("no review %q: %w", id, fault.ErrNotFound)
		}
		return workflows.AirlockState{}, fmt.Errorf("query review %q: %w: %w", id, fault.ErrUnavailable, err)
	}
	var st workflows.AirlockState
	if err := v.Get(&st); err != nil {
		return workflows.AirlockState{}, fmt.Errorf("decode review %q: %w", id, err)
	}
	return st, nil
}

func (h *Handler) getPending(c *gin.Context) {
	st, err := h.state(c.Request.Context(), c.Param("id"))
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, gin.H{"id": c.Param("id"), "state": st})
}

type approveRequest struct {
	Policy airlock.Policy `json:"policy"`
}

type rejectRequest struct {
	Reason string `json:"reason"`
}

// decision sends a review its decision (the workflow's UpdateDecide), then
// waits (?wait=, at most 10 minutes) for its outcome: 200 with the outcome
// when it ends in time, else 202. The review answers the update itself, so
// a decision on a review already decided (two quick rejects, an approval
// after a rejection) is a 409, never accepted and dropped.
func (h *Handler) decision(c *gin.Context, d workflows.Decision) {
	ctx := c.Request.Context()
	id := c.Param("id")
	wait, err := waitParam(c, 0)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	st, err := h.state(ctx, id)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	if st.Status != workflows.AirlockPending && st.Status != workflows.AirlockPreparing {
		httpx.Error(c, fmt.Errorf("review %s is %s, not pending: %w", id, st.Status, fault.ErrConflict))
		return
	}
	if err := h.decide(ctx, id, d); err != nil {
		httpx.Error(c, err)
		return
	}
	verb := workflows.SignalApprove
	if d.Reject != nil {
		verb = workflows.SignalReject
	}
	out := gin.H{"id": id, "decision": verb}
	if wait > 0 {
		wctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		var outcome workflows.AirlockOutcome
		if err := h.temporal.GetWorkflow(wctx, id, "").Get(wctx, &outcome); err == nil {
			out["outcome"] = outcome
			httpx.OK(c, http.StatusOK, out)
			return
		}
	}
	httpx.OK(c, http.StatusAccepted, out)
}

// decide sends the update and waits until the review has recorded (or
// refused) the decision; refusals become fault errors.
func (h *Handler) decide(ctx context.Context, id string, d workflows.Decision) error {
	handle, err := h.temporal.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: id, UpdateName: workflows.UpdateDecide, Args: []any{d}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = handle.Get(ctx, nil)
	}
	if err == nil {
		return nil
	}
	var appErr *temporal.ApplicationError
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &appErr) && appErr.Type() == workflows.ErrTypeReviewDecided:
		return fmt.Errorf("review %s: %s: %w", id, appErr.Message(), fault.ErrConflict)
	case errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeInvalidInput:
		return fmt.Errorf("review %s: %s: %w", id, appErr.Message(), fault.ErrInvalid)
	case errors.As(err, &nf):
		// The review ended between the state query and the update.
		if st, qerr := h.state(ctx, id); qerr == nil {
			return fmt.Errorf("review %s is %s, not pending: %w", id, st.Status, fault.ErrConflict)
		}
		return fmt.Errorf("no running review %q: %w", id, fault.ErrNotFound)
	}
	return fmt.Errorf("decide review %q: %w: %w", id, fault.ErrUnavailable, err)
}

// waitParam reads ?wait= (a Go duration up to 10m), def when absent.
func waitParam(c *gin.Context, def time.Duration) (time.Duration, error) {
	raw := c.Query("wait")
	if raw == "" {
		return def, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil || d < 0 || d > 10*time.Minute {
		return 0, fault.Malformed("wait", "must be a duration between 0s and 10m, got %q", raw)
	}
	return d, nil
}

func (h *Handler) approve(c *gin.Context) {
	var req approveRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		httpx.Error(c, err)
		return
	}
	if err := req.Policy.Validate(); err != nil {
		v := &fault.ValidationError{}
		for _, f := range fault.Fields(err) {
			v.Add("policy."+f.Path, "%s", f.Message)
		}
		httpx.Error(c, v)
		return
	}
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	// The reviewer is the authenticated identity, never a header.
	h.decision(c, workflows.Decision{Approve: &workflows.ApproveSignal{Reviewer: reviewer(c, caller), Policy: req.Policy}})
}

func (h *Handler) reject(c *gin.Context) {
	var req rejectRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		httpx.Error(c, err)
		return
	}
	if strings.TrimSpace(req.Reason) == "" {
		httpx.Error(c, fault.Invalid("reason", "is required: say why the tool is rejected"))
		return
	}
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	h.decision(c, workflows.Decision{Reject: &workflows.RejectSignal{Reviewer: reviewer(c, caller), Reason: req.Reason}})
}

// reviewer names the authenticated identity that decides a review: its
// subject, with the owner's name when the credential has one.
func reviewer(c *gin.Context, caller access.Caller) string {
	p := httpx.Principal(c)
	if p.Name != "" && p.Name != p.Subject {
		return p.Subject + " (" + p.Name + ")"
	}
	return caller.UserID
}
