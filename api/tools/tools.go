// Package tools is the HTTP edge of tool registration: it
// registers, updates, deprecates and batch-registers tools through a
// registry.Service, and serves the caller-filtered lightweight index, full
// records and revision history. Every error goes through httpx.Error; a tool
// the caller may not see answers 404 exactly like an unknown id, so
// existence does not leak.
//
// Routes, under /api/v1:
//
//	POST   /tools/register          201, body registry.Request
//	POST   /tools/batch-register    200, body {"tools":[Request…],"upsert":bool}, per-item results
//	GET    /tools                   200, lightweight index: limit, cursor, category, status, module, sort (id or uses: most used first)
//	GET    /tools/:toolId           200, full record with manifest
//	GET    /tools/:toolId/history   200, revisions oldest first
//	PUT    /tools/:toolId           200, body registry.Request; useCases and examples it does not mention are kept
//	DELETE /tools/:toolId           200, deprecates; reason from body {"reason":…} or ?reason=
//
// Other packages may add static routes beside :toolId (for example
// /tools/retrieval/search or POST /tools/search); gin lets static segments
// and a parameter share a position.
package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/registry"
)

// Limits of the endpoints.
const (
	DefaultLimit  = 100
	MaxLimit      = 1000
	MaxBatchItems = 1000
	MaxReasonLen  = 1000
)

// Handlers serves the registration routes. Build it with New.
type Handlers struct {
	svc *registry.Service
}

// New returns the registration routes as a Mounter.
func New(svc *registry.Service) *Handlers {
	if svc == nil {
		panic("tools: nil registry service")
	}
	return &Handlers{svc: svc}
}

var _ httpx.Mounter = (*Handlers)(nil)

// Mount adds the routes to the /api/v1 group.
func (h *Handlers) Mount(v1 *gin.RouterGroup) {
	g := v1.Group("/tools")
	g.POST("/register", h.register)
	g.POST("/batch-register", h.batchRegister)
	g.GET("", h.list)
	g.GET("/:toolId", h.get)
	g.GET("/:toolId/history", h.history)
	g.PUT("/:toolId", h.update)
	g.DELETE("/:toolId", h.deprecate)
}

func (h *Handlers) register(c *gin.Context) {
	var req registry.Request
	if err := httpx.BindJSON(c, &req); err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.AuditTools(c, manifestToolID(req.Manifest)) // a refused registration names its tool too
	res, err := h.svc.Register(c.Request.Context(), req)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.AuditTools(c, res.ToolID)
	c.Header("Location", "/api/v1/tools/"+res.ToolID)
	httpx.OK(c, http.StatusCreated, res)
}

func (h *Handlers) update(c *gin.Context) {
	var req registry.Request
	if err := httpx.BindJSON(c, &req); err != nil {
		httpx.Error(c, err)
		return
	}
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	id := c.Param("toolId")
	res, err := h.svc.UpdateVisible(c.Request.Context(), id, req, caller.Allows)
	if err != nil {
		httpx.Error(c, notFound(id, err))
		return
	}
	httpx.OK(c, http.StatusOK, res)
}

// DeprecateRequest is the optional body of DELETE /tools/:toolId.
type DeprecateRequest struct {
	Reason string `json:"reason"`
}

// DeprecateResult is what DELETE /tools/:toolId answers.
type DeprecateResult struct {
	ToolID   string `json:"toolId"`
	Status   string `json:"status"`
	Reason   string `json:"reason,omitempty"`
	Revision int    `json:"revision"`
}

func (h *Handlers) deprecate(c *gin.Context) {
	id := c.Param("toolId")
	reason := strings.TrimSpace(c.Query("reason"))
	body, err := io.ReadAll(io.LimitReader(c.Request.Body, httpx.MaxBodyBytes+1))
	if err != nil {
		httpx.Error(c, fault.Malformed("body", "cannot read request body: %v", err))
		return
	}
	if len(bytes.TrimSpace(body)) > 0 {
		var req DeprecateRequest
		if err := httpx.DecodeStrict(body, &req); err != nil {
			httpx.Error(c, err)
			return
		}
		if r := strings.TrimSpace(req.Reason); r != "" {
			if reason != "" && reason != r {
				httpx.Error(c, fault.Malformed("reason", "given both in the body and as ?reason= with different values"))
				return
			}
			reason = r
		}
	}
	if len(reason) > MaxReasonLen {
		httpx.Error(c, fault.Invalid("reason", "must be at most %d bytes, got %d", MaxReasonLen, len(reason)))
		return
	}
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	ctx := c.Request.Context()
	if err := h.svc.DeprecateVisible(ctx, id, reason, caller.Allows); err != nil {
		httpx.Error(c, notFound(id, err))
		return
	}
	t, err := h.svc.Get(ctx, id)
	if err != nil {
		httpx.Error(c, notFound(id, err))
		return
	}
	rev := 0
	if hist, err := h.svc.History(ctx, id); err == nil && len(hist) > 0 {
		// A repeated deprecation changed nothing: it answers as the first.
		rev, reason = hist[len(hist)-1].Revision, hist[len(hist)-1].Reason
	}
	httpx.OK(c, http.StatusOK, DeprecateResult{ToolID: id, Status: t.Status, Reason: reason, Revision: rev})
}

// BatchRequest is the body of POST /tools/batch-register.
type BatchRequest struct {
	Tools  []registry.Request `json:"tools"`
	Upsert bool               `json:"upsert"`
}

// BatchResult is what POST /tools/batch-register answers: one result per
// item in request order, and counts by item status.
type BatchResult struct {
	Results   []registry.ItemResult `json:"results"`
	Total     int                   `json:"total"`
	Created   int                   `json:"created"`
	Updated   int                   `json:"updated"`
	Unchanged int                   `json:"unchanged"`
	Failed    int                   `json:"failed"`
}

func (h *Handlers) batchRegister(c *gin.Context) {
	var req BatchRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		httpx.Error(c, err)
		return
	}
	switch {
	case req.Tools == nil:
		httpx.Error(c, fault.Malformed("tools", "is required: a list of registration requests"))
		return
	case len(req.Tools) == 0:
		httpx.Error(c, fault.Invalid("tools", "must not be empty"))
		return
	case len(req.Tools) > MaxBatchItems:
		httpx.Error(c, fault.Invalid("tools", "must hold at most %d items, got %d", MaxBatchItems, len(req.Tools)))
		return
	}
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	results := h.svc.BatchRegister(c.Request.Context(), req.Tools, registry.BatchOptions{Upsert: req.Upsert, Allow: caller.Allows})
	for i, r := range results {
		id := r.ToolID
		if id == "" && i < len(req.Tools) {
			id = manifestToolID(req.Tools[i].Manifest)
		}
		httpx.AuditTools(c, id)
	}
	out := BatchResult{Results: results, Total: len(results)}
	for _, r := range results {
		switch r.Status {
		case registry.StatusCreated:
			out.Created++
		case registry.StatusUpdated:
			out.Updated++
		case registry.StatusUnchanged:
			out.Unchanged++
		default:
			out.Failed++
		}
	}
	// Per-item outcomes are in the body (207-style); the request itself
	// succeeded even when some items failed.
	httpx.OK(c, http.StatusOK, out)
}

// Page is what GET /tools answers. It carries no total: a count of tools
// the caller cannot see would leak their existence.
type Page struct {
	Items      []graph.ToolSummary `json:"items"`
	Count      int                 `json:"count"`
	NextCursor string              `json:"nextCursor,omitempty"`
}

// UsePage is GET /tools?sort=uses: the tools with their use counts, most
// used first.
type UsePage struct {
	Items      []registry.UsedTool `json:"items"`
	Count      int                 `json:"count"`
	NextCursor string              `json:"nextCursor,omitempty"`
	Matched    int                 `json:"matched"`
	Truncated  bool                `json:"truncated,omitempty"`
}

var statuses = []string{graph.StatusActive, graph.StatusDeprecated, graph.StatusDisabled}

func (h *Handlers) list(c *gin.Context) {
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	limit, err := httpx.QueryInt(c, "limit", DefaultLimit, 1, MaxLimit)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	f := caller.Filter()
	f.Categories = splitQuery(c, "category")
	f.Statuses = splitQuery(c, "status")
	for _, s := range f.Statuses {
		if !slices.Contains(statuses, s) {
			httpx.Error(c, fault.Malformed("status", "must be %s (comma-separated for several), got %q", strings.Join(statuses, ", "), s))
			return
		}
	}
	f.Modules = splitQuery(c, "module")
	switch sort := c.DefaultQuery("sort", "id"); sort {
	case "id":
	case "uses":
		// Most used first; the cursor is an offset into that order.
		offset := 0
		if raw := c.Query("cursor"); raw != "" {
			if offset, err = strconv.Atoi(raw); err != nil || offset < 0 {
				httpx.Error(c, fault.Malformed("cursor", "must be the nextCursor of the previous page, got %q", raw))
				return
			}
		}
		page, err := h.svc.ListByUse(c.Request.Context(), f, offset, limit)
		if err != nil {
			httpx.Error(c, err)
			return
		}
		next := ""
		if page.Next > 0 {
			next = strconv.Itoa(page.Next)
		}
		httpx.OK(c, http.StatusOK, UsePage{Items: page.Items, Count: len(page.Items), NextCursor: next, Matched: page.Matched, Truncated: page.Truncated})
		return
	default:
		httpx.Error(c, fault.Malformed("sort", "must be id or uses, got %q", sort))
		return
	}
	page, err := h.svc.Page(c.Request.Context(), f, limit, c.Query("cursor"))
	if err != nil {
		httpx.Error(c, err)
		return
	}
	items := page.Items
	if items == nil {
		items = []graph.ToolSummary{}
	}
	httpx.OK(c, http.StatusOK, Page{Items: items, Count: len(items), NextCursor: page.Next})
}

// splitQuery reads a query parameter given repeated or comma-separated.
func splitQuery(c *gin.Context, name string) []string {
	var out []string
	for _, v := range c.QueryArray(name) {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

func (h *Handlers) get(c *gin.Context) {
	t, ok := h.visible(c)
	if !ok {
		return
	}
	httpx.OK(c, http.StatusOK, t)
}

func (h *Handlers) history(c *gin.Context) {
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	id := c.Param("toolId")
	revs, err := h.svc.HistoryVisible(c.Request.Context(), id, caller.Allows)
	if err != nil {
		httpx.Error(c, notFound(id, err))
		return
	}
	if revs == nil {
		revs = []graph.Revision{}
	}
	httpx.OK(c, http.StatusOK, gin.H{"toolId": id, "revisions": revs})
}

// visible loads the tool named in the path and checks the caller may see
// it; otherwise it writes the error (404 for unknown and hidden alike) and
// reports false.
func (h *Handlers) visible(c *gin.Context) (graph.Tool, bool) {
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return graph.Tool{}, false
	}
	id := c.Param("toolId")
	t, err := h.svc.GetVisible(c.Request.Context(), id, caller.Allows)
	if err != nil {
		httpx.Error(c, notFound(id, err))
		return graph.Tool{}, false
	}
	return t, true
}

// manifestToolID is the toolId a raw manifest names, or "" when it names
// none (the registry validates it; this is only for the audit record).
func manifestToolID(raw json.RawMessage) string {
	var m struct {
		ToolID string `json:"toolId"`
	}
	if json.Unmarshal(raw, &m) != nil || len(m.ToolID) > 200 {
		return ""
	}
	return m.ToolID
}

// notFound gives every not-found outcome the same message, so a hidden tool
// is indistinguishable from an unknown one; other errors pass unchanged.
func notFound(id string, err error) error {
	if errors.Is(err, fault.ErrNotFound) {
		return fmt.Errorf("tools: tool %q: %w", id, fault.ErrNotFound)
	}
	return err
}
