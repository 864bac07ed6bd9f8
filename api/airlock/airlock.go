// Package airlock serves the airlock's HTTP routes: tool sources, the
// pending reviews with their details and timelines, approve/reject, and
// GET /tools/reviews, the reviews that ended with their decisions. Each
// route translates HTTP to the review service (airlock/review), which owns
// the lifecycle and its Temporal calls.
package airlock

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/airlock/review"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// Notifications lists notifications, newest first.
type Notifications interface {
	List(ctx context.Context, limit int) ([]airlock.Notification, error)
}

// Enabler re-enables the tools of an onboarded API.
type Enabler interface {
	Enable(ctx context.Context, slug, reason string) ([]string, error)
}

// Handler serves the airlock routes.
type Handler struct {
	reviews *review.Service
	notes   Notifications
	enabler Enabler
}

// WithOperations adds GET /notifications and POST /tools/:toolId/enable.
func (h *Handler) WithOperations(n Notifications, e Enabler) *Handler {
	h.notes, h.enabler = n, e
	return h
}

// New returns the airlock routes over the review service.
func New(reviews *review.Service) *Handler {
	if reviews == nil {
		panic("airlock: nil review service")
	}
	return &Handler{reviews: reviews}
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
	items, err := h.notes.List(c.Request.Context(), limit)
	if err != nil {
		httpx.Error(c, err)
		return
	}
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
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	added, err := h.reviews.AddSource(c.Request.Context(), caller, airlock.Source{Type: req.Type, Location: req.Location}, req.Scan == nil || *req.Scan, wait)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	out := gin.H{"source": added.Source}
	if added.Scan != nil {
		out["scanWorkflowId"] = added.ScanID
		out["scan"] = added.Scan
	}
	httpx.OK(c, http.StatusCreated, out)
}

func (h *Handler) listSources(c *gin.Context) {
	srcs, err := h.reviews.Sources(c.Request.Context())
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, gin.H{"sources": srcs})
}

func (h *Handler) scanAll(c *gin.Context) {
	id, err := h.reviews.ScanAll(c.Request.Context())
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusAccepted, gin.H{"scanWorkflowId": id})
}

func (h *Handler) deleteSource(c *gin.Context) {
	if err := h.reviews.DeleteSource(c.Request.Context(), c.Param("id")); err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, gin.H{"deleted": c.Param("id")})
}

func (h *Handler) listPending(c *gin.Context) {
	items, err := h.reviews.Pending(c.Request.Context())
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, gin.H{"pending": items, "count": len(items)})
}

func (h *Handler) getPending(c *gin.Context) {
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	st, err := h.reviews.View(c.Request.Context(), c.Param("id"), caller)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, gin.H{"id": c.Param("id"), "state": st})
}

// timeline is GET /tools/pending/:id/timeline.
func (h *Handler) timeline(c *gin.Context) {
	tl, err := h.reviews.Timeline(c.Request.Context(), c.Param("id"))
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, gin.H{"id": c.Param("id"), "timeline": tl})
}

// listDecided is GET /tools/reviews: reviews that ended, newest first,
// paged by cursor, naming only the tools the caller may execute.
func (h *Handler) listDecided(c *gin.Context) {
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	limit, err := httpx.QueryInt(c, "limit", 25, 1, 100)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	page, err := h.reviews.Decided(c.Request.Context(), caller, limit, c.Query("cursor"))
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, gin.H{"reviews": page.Reviews, "count": len(page.Reviews), "nextCursor": page.Next})
}

type approveRequest struct {
	Policy airlock.Policy `json:"policy"`
}

type rejectRequest struct {
	Reason string `json:"reason"`
}

// waitParam reads ?wait= (a Go duration up to 10m), def when absent.
func waitParam(c *gin.Context, def time.Duration) (time.Duration, error) {
	raw := c.Query("wait")
	if raw == "" {
		return def, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil || d < 0 || d > review.MaxWait {
		return 0, fault.Malformed("wait", "must be a duration between 0s and 10m, got %q", raw)
	}
	return d, nil
}

// decided answers a decision: 200 with the outcome when the review ended
// within ?wait=, else 202. A decision on a review already decided is a
// 409, never accepted and dropped.
func decided(c *gin.Context, res review.DecisionResult, err error) {
	if err != nil {
		httpx.Error(c, err)
		return
	}
	out := gin.H{"id": res.ID, "decision": res.Decision}
	if res.Outcome != nil {
		out["outcome"] = res.Outcome
		httpx.OK(c, http.StatusOK, out)
		return
	}
	httpx.OK(c, http.StatusAccepted, out)
}

func (h *Handler) approve(c *gin.Context) {
	var req approveRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		httpx.Error(c, err)
		return
	}
	wait, reviewer, caller, err := decisionParams(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	res, err := h.reviews.Approve(c.Request.Context(), c.Param("id"), reviewer, caller, req.Policy, wait)
	decided(c, res, err)
}

func (h *Handler) reject(c *gin.Context) {
	var req rejectRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		httpx.Error(c, err)
		return
	}
	wait, reviewer, caller, err := decisionParams(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	res, err := h.reviews.Reject(c.Request.Context(), c.Param("id"), reviewer, caller, req.Reason, wait)
	decided(c, res, err)
}

// decisionParams reads a decision's ?wait= and its reviewer: the
// authenticated identity, never a header.
func decisionParams(c *gin.Context) (time.Duration, string, access.Caller, error) {
	caller, err := httpx.Caller(c)
	if err != nil {
		return 0, "", access.Caller{}, err
	}
	wait, err := waitParam(c, 0)
	if err != nil {
		return 0, "", access.Caller{}, err
	}
	return wait, review.Reviewer(httpx.Principal(c), caller), caller, nil
}
