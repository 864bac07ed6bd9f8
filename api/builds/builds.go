// Package builds serves building a tool from scratch for a gap:
// POST /api/v1/gaps/:id/build (approvers; :id is the gap's verb) starts
// BuildToolWorkflow and answers 202 with the build's status URL, and
// GET /api/v1/builds/:id (approvers) answers the build's state: its
// rounds, the program that passed with its tests and hosts, the model and
// prompt version, and its result. The program is reviewed on the airlock's
// pending-review routes (/api/v1/tools/pending/:id).
package builds

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/fulfil"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/workflows"
)

// Handler serves the build routes.
type Handler struct{ builds *fulfil.Builds }

// New returns the handler.
func New(b *fulfil.Builds) *Handler { return &Handler{builds: b} }

// Mount adds the routes to the /api/v1 group.
func (h *Handler) Mount(v1 *gin.RouterGroup) {
	v1.POST("/gaps/:id/build", h.start)
	v1.GET("/builds/:id", h.get)
}

type startRequest struct {
	// Expected describes the output the tool should give (shown to the
	// model; at most 1000 characters).
	Expected string `json:"expected"`
	// Rounds bounds the model's attempts (1–5; default 3).
	Rounds int `json:"rounds"`
	// ReviewTimeout ends the wait for a decision (a Go duration, 1m to
	// MaxReviewTimeout).
	ReviewTimeout string `json:"reviewTimeout"`
}

// MaxReviewTimeout bounds how long a build's review may wait for a
// decision: a build nobody decides on within 30 days ends timed_out.
const MaxReviewTimeout = 30 * 24 * time.Hour

func (h *Handler) start(c *gin.Context) {
	var req startRequest
	if c.Request.ContentLength != 0 {
		if err := httpx.BindJSON(c, &req); err != nil {
			httpx.Error(c, err)
			return
		}
	}
	var opts workflows.BuildOptions
	if req.Rounds < 0 || req.Rounds > 5 {
		httpx.Error(c, fault.Invalid("rounds", "must be between 1 and 5 (0: the default, %d), got %d", workflows.DefaultBuildRounds, req.Rounds))
		return
	}
	opts.Rounds = req.Rounds
	if len(req.Expected) > 1000 {
		httpx.Error(c, fault.Invalid("expected", "must be at most 1000 characters, got %d", len(req.Expected)))
		return
	}
	if req.ReviewTimeout != "" {
		d, err := time.ParseDuration(req.ReviewTimeout)
		if err != nil || d < time.Minute || d > MaxReviewTimeout {
			httpx.Error(c, fault.Invalid("reviewTimeout", "must be a Go duration from 1m to 720h (30 days), got %q", req.ReviewTimeout))
			return
		}
		opts.ReviewTimeout = d
	}
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	started, err := h.builds.Start(c.Request.Context(), c.Param("id"), workflows.BuildInput{Expected: req.Expected, RequestedBy: caller.UserID, Options: opts})
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusAccepted, gin.H{"id": started.ID, "verb": started.Verb, "status": workflows.BuildWriting,
		"statusUrl": "/api/v1/builds/" + started.ID, "reviewUrl": "/api/v1/tools/pending/" + started.ID})
}

func (h *Handler) get(c *gin.Context) {
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	st, err := h.builds.State(c.Request.Context(), c.Param("id"), caller)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, gin.H{"id": c.Param("id"), "state": st})
}
