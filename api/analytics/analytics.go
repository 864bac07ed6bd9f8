// Package analytics serves GET /api/v1/tools/admin/analytics (admin, see
// api.Rules): the report of package analytics over the graph store and
// recent novel-verb runs; and GET /api/v1/gaps (approvers and admins): the
// capability gaps the store keeps; and GET /api/v1/tools/admin/series
// (admin): the operations time series the console's dashboard draws.
//
// Query parameters: since (RFC 3339, default 7 days ago) bounds the runs,
// top (1–100, default 10) the ranked lists; source=scheduled answers the
// latest report of the scheduled analytics instead of computing one.
package analytics

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolsmith/toolsmith/access"
	domain "github.com/toolsmith/toolsmith/analytics"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// Handler serves the analytics route.
type Handler struct {
	store graph.Store
	runs  domain.RunLister
}

// New returns the handler; runs may be nil (no fulfilment figures).
func New(store graph.Store, runs domain.RunLister) *Handler {
	return &Handler{store: store, runs: runs}
}

// Mount adds the route to the /api/v1 group.
func (h *Handler) Mount(v1 *gin.RouterGroup) {
	v1.GET("/tools/admin/analytics", h.report)
	v1.GET("/gaps", h.gaps)
	v1.GET("/tools/admin/series", h.series)
}

// SeriesPoint is one bucket of a series as GET /tools/admin/series
// answers it: the events (or gauge samples) it counts, their sum and mean,
// and for latencies the p50 and p95 in milliseconds (each the upper bound
// of its histogram bucket).
type SeriesPoint struct {
	Series string    `json:"series"`
	At     time.Time `json:"at"`
	Count  float64   `json:"count"`
	Sum    float64   `json:"sum"`
	Mean   float64   `json:"mean"`
	P50    float64   `json:"p50,omitempty"`
	P95    float64   `json:"p95,omitempty"`
}

// seriesWindow is each resolution's default window.
var seriesWindow = map[string]time.Duration{graph.ResMinute: 6 * time.Hour, graph.ResHour: 48 * time.Hour, graph.ResDay: 30 * 24 * time.Hour}

// series answers the operations time series (the dashboard's data): the
// points of series (comma-separated names) or of every series starting
// with prefix, at res (minute, hour or day; finer points not yet rolled
// up are rolled up into it), since an RFC 3339 time (default: 6 hours of
// minutes, 48 of hours, 30 days).
func (h *Handler) series(c *gin.Context) {
	st := h.store
	res := c.DefaultQuery("res", graph.ResHour)
	window, ok := seriesWindow[res]
	if !ok {
		httpx.Error(c, fault.Malformed("res", "must be minute, hour or day, got %q", res))
		return
	}
	since := time.Now().Add(-window)
	if raw := c.Query("since"); raw != "" {
		t, err := time.Parse(time.RFC3339, raw)
		if err != nil {
			httpx.Error(c, fault.Malformed("since", "must be an RFC 3339 time such as 2026-11-24T10:00:00Z, got %q", raw))
			return
		}
		since = t
	}
	q := graph.SeriesQuery{Prefix: c.Query("prefix"), Res: res, Since: graph.Truncate(since, res)}
	for _, n := range strings.Split(c.Query("series"), ",") {
		if n = strings.TrimSpace(n); n != "" {
			q.Series = append(q.Series, n)
		}
	}
	if len(q.Series) == 0 && q.Prefix == "" {
		httpx.Error(c, fault.Malformed("series", "name the series (comma-separated) or give a prefix"))
		return
	}
	pts, err := domain.SeriesAt(c.Request.Context(), st, q)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	out := make([]SeriesPoint, 0, len(pts))
	for _, p := range pts {
		v := SeriesPoint{Series: p.Series, At: p.At, Count: p.Count, Sum: p.Sum}
		if p.Count > 0 {
			v.Mean = p.Sum / p.Count
		}
		if p.Hist != nil {
			v.P50, v.P95 = p.Quantile(0.5), p.Quantile(0.95)
		}
		out = append(out, v)
	}
	httpx.OK(c, http.StatusOK, gin.H{"res": res, "since": q.Since, "points": out})
}

// scheduled answers the latest report of the scheduled analytics
// (AnalyticsWorkflow), with when it was made.
func (h *Handler) scheduled(c *gin.Context) {
	snap, err := h.store.GetSnapshot(c.Request.Context(), domain.SnapshotReport)
	if err != nil {
		if errors.Is(err, fault.ErrNotFound) {
			httpx.Error(c, fmt.Errorf("no scheduled analytics yet: the analytics workflow runs every --analytics-every (daily by default); use source=live meanwhile: %w", fault.ErrNotFound))
			return
		}
		httpx.Error(c, err)
		return
	}
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	// The scheduled report covers every tool: the reader sees only those
	// it may execute.
	var r domain.Report
	if err := json.Unmarshal(snap.Data, &r); err != nil {
		httpx.Error(c, fmt.Errorf("analytics: read the scheduled report: %w", err))
		return
	}
	if r, err = r.For(c.Request.Context(), h.store, caller); err != nil {
		httpx.Error(c, err)
		return
	}
	c.Header("Last-Modified", snap.At.UTC().Format(http.TimeFormat))
	httpx.OK(c, http.StatusOK, gin.H{"source": "scheduled", "at": snap.At, "report": r})
}

// gaps lists the capability gaps: the verbs nothing fulfilled, the most
// frequent first. Query: status (open, the default; closed; all), limit
// (1–1000, default 100).
func (h *Handler) gaps(c *gin.Context) {
	limit, err := httpx.QueryInt(c, "limit", 100, 1, 1000)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	status, err := graph.ParseGapStatus(c.DefaultQuery("status", graph.GapOpen))
	if err != nil {
		httpx.Error(c, err)
		return
	}
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	list, err := h.store.ListGaps(c.Request.Context(), graph.GapQuery{Status: status, Limit: limit})
	if err == nil {
		// A gap names only the tools the caller may execute.
		list, err = access.VisibleGaps(c.Request.Context(), h.store, list, caller)
	}
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, gin.H{"gaps": list, "count": len(list)})
}

var _ httpx.Mounter = (*Handler)(nil)

func (h *Handler) report(c *gin.Context) {
	switch src := c.DefaultQuery("source", "live"); src {
	case "live":
	case "scheduled":
		h.scheduled(c)
		return
	default:
		httpx.Error(c, fault.Malformed("source", "must be live or scheduled, got %q", src))
		return
	}
	top, err := httpx.QueryInt(c, "top", 10, 1, 100)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	var since time.Time
	if raw := c.Query("since"); raw != "" {
		if since, err = time.Parse(time.RFC3339, raw); err != nil {
			httpx.Error(c, fault.Malformed("since", "must be an RFC 3339 time such as 2026-11-24T10:00:00Z, got %q", raw))
			return
		}
	}
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	r, err := domain.Build(c.Request.Context(), h.store, h.runs, domain.Options{Since: since, Top: top, Caller: &caller})
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, r)
}
