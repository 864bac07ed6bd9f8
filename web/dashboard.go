package web

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/analytics"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/retrieval/retrain"
)

// dashboard is the operators' first page: searches and their latency,
// fulfilments by branch and outcome, the top tools' executions and
// success, and open gaps over time, from the time series the server keeps
// in the store (what GET /api/v1/tools/admin/series answers) and the
// analytics report.
func (c *Console) dashboard(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	now := c.now().UTC()
	read := func(q graph.SeriesQuery) ([]seriesPoint, int, string) {
		pts, err := c.series(r, s, q)
		if err != nil {
			code, msg := c.problem(r, err)
			return nil, code, msg
		}
		return pts, http.StatusOK, ""
	}
	minSince := now.Add(-6 * time.Hour).Truncate(time.Minute)
	search, code, msg := read(graph.SeriesQuery{Series: []string{"search"}, Res: graph.ResMinute, Since: minSince})
	if code == http.StatusForbidden {
		c.page(w, r, s, code, "error", map[string]any{"Title": "Dashboard", "Message": msg,
			"Next": "The dashboard is for admins; the menu offers what your key may open.", "Back": c.home(r.Context(), s), "BackLabel": "Your first page"})
		return
	}
	var errs []string
	if msg != "" {
		errs = append(errs, msg)
	}
	var charts []chart
	xs := buckets(minSince, now.Truncate(time.Minute), time.Minute)
	if len(search) == 0 {
		charts = append(charts, chart{ID: "searches", Title: "Searches per minute", Empty: "No search in the last 6 hours. Searches from the API, MCP and the Tools page are counted here within a minute."},
			chart{ID: "latency", Title: "Search latency (p50 and p95)", Empty: "No latency to show until searches are made."})
	} else {
		charts = append(charts,
			lineChart("searches", "Searches per minute", "Searches per minute over the last 6 hours.", "15:04", "", xs,
				[]line{{Name: "searches", Class: "s0", Values: valuesAt(xs, search, "search", func(p seriesPoint) float64 { return p.Count })}}),
			lineChart("latency", "Search latency (p50 and p95)", "Median and 95th percentile search latency in milliseconds per minute over the last 6 hours.", "15:04", " ms", xs,
				[]line{{Name: "p50 ms", Class: "s0", Values: valuesAt(xs, search, "search", func(p seriesPoint) float64 { return p.P50 })},
					{Name: "p95 ms", Class: "s1", Values: valuesAt(xs, search, "search", func(p seriesPoint) float64 { return p.P95 })}}))
	}
	fulfil := func(res string, window, step time.Duration, layout, title string) chart {
		since := now.Add(-window).Truncate(step)
		if res == "day" {
			since = time.Date(since.Year(), since.Month(), since.Day(), 0, 0, 0, 0, time.UTC)
		}
		pts, _, msg := read(graph.SeriesQuery{Prefix: "fulfil:", Res: res, Since: since})
		if msg != "" {
			errs = append(errs, msg)
		}
		id := "fulfil-" + res
		if len(pts) == 0 {
			return chart{ID: id, Title: title, Empty: "No fulfilment ended in this window. Planners' novel verbs (POST /api/v1/verbs, MCP) show here by branch and outcome."}
		}
		end := now.Truncate(step)
		if res == "day" {
			end = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
		}
		xs := buckets(since, end, step)
		var stacks []line
		for i, name := range seriesNames(pts) {
			stacks = append(stacks, line{Name: strings.ReplaceAll(strings.TrimPrefix(name, "fulfil:"), ":", " · "), Class: "s" + string(rune('0'+i%6)),
				Values: valuesAt(xs, pts, name, func(p seriesPoint) float64 { return p.Count })})
		}
		return stackChart(id, title, title+", stacked by branch and outcome.", layout, xs, stacks)
	}
	charts = append(charts, fulfil("hour", 48*time.Hour, time.Hour, "Jan 2 15h", "Fulfilments per hour (48 hours)"),
		fulfil("day", 30*24*time.Hour, 24*time.Hour, "Jan 2", "Fulfilments per day (30 days)"))

	rep, err := c.report(r, s, 10)
	if err != nil {
		errs = append(errs, c.errorText(r, err))
	}
	var top []barItem
	for _, u := range rep.MostUsed {
		if u.Uses > 0 {
			top = append(top, barItem{Label: u.ToolID, Value: float64(u.Uses), Rate: u.SuccessRate})
		}
	}
	if len(top) == 0 {
		charts = append(charts, chart{ID: "top-tools", Title: "Executions and success rate of the top tools", Empty: "No tool has been executed yet. Executions through the API and MCP are counted per tool."})
	} else {
		charts = append(charts, barChart("top-tools", "Executions and success rate of the top tools", "The most executed tools, with the share of their executions that succeeded.", top))
	}

	gapSince := now.Add(-14 * 24 * time.Hour).Truncate(time.Hour)
	gaps, _, gmsg := read(graph.SeriesQuery{Series: []string{"gaps.open"}, Res: graph.ResHour, Since: gapSince})
	if gmsg != "" {
		errs = append(errs, gmsg)
	}
	if len(gaps) == 0 {
		charts = append(charts, chart{ID: "gaps", Title: "Open gaps", Empty: "No sample of the open gaps yet: the server takes one a minute."})
	} else {
		gx := buckets(gapSince, now.Truncate(time.Hour), time.Hour)
		// Hours with no sample (the server was down) are left out rather
		// than drawn as zero.
		var kept []time.Time
		vals := valuesAt(gx, gaps, "gaps.open", func(p seriesPoint) float64 { return p.Mean })
		has := valuesAt(gx, gaps, "gaps.open", func(p seriesPoint) float64 { return p.Count })
		var kv []float64
		for i := range gx {
			if has[i] > 0 {
				kept, kv = append(kept, gx[i]), append(kv, vals[i])
			}
		}
		charts = append(charts, lineChart("gaps", "Open gaps", "The number of open capability gaps, hourly means over the last 14 days.", "Jan 2 15h", "", kept,
			[]line{{Name: "open gaps", Class: "s2", Values: kv}}))
	}
	models, mmsg := c.rankingModels(r, s)
	if mmsg != "" {
		errs = append(errs, mmsg)
	}
	c.page(w, r, s, http.StatusOK, "dashboard", map[string]any{"Charts": charts, "Errors": errs, "Now": now, "Models": models})
}

// modelRow is one ranking model version on the dashboard: its decision and
// the held-out replay's figures beside the model it was measured against.
type modelRow struct {
	ID, Status, Created, Reason string
	Current, Candidate          string
	HeldOut                     int
}

// rankingModels reads the learned ranking model's versions (newest first,
// as GET /api/v1/admin/ranking/versions answers them) for the dashboard;
// a process that keeps none shows nothing.
func (c *Console) rankingModels(r *http.Request, s *session) (map[string]any, string) {
	if c.d.Models == nil {
		return nil, "" // no ranking model is kept here (as the API's 404)
	}
	vs, promoted, err := func() ([]retrain.Version, string, error) {
		if err := c.allow(r, s, http.MethodGet, routeVersions); err != nil {
			return nil, "", err
		}
		vs, err := c.d.Models.List(r.Context(), 10)
		if err != nil {
			return nil, "", err
		}
		promoted, err := c.d.Models.PromotedID(r.Context())
		return vs, promoted, err
	}()
	if err != nil {
		return nil, c.errorText(r, err)
	}
	show := func(f *retrain.Figures) string {
		if f == nil {
			return "not evaluated"
		}
		if f.N == 0 {
			return "no held-out queries"
		}
		return fmt.Sprintf("MRR %.3f · R@1 %.3f · R@5 %.3f", f.MRR, f.R1, f.R5)
	}
	rows := make([]modelRow, 0, len(vs))
	for _, v := range vs {
		row := modelRow{ID: v.ID, Status: v.Status, Created: v.CreatedAt.UTC().Format("2006-01-02 15:04"), Reason: v.Reason,
			Current: show(v.Current), Candidate: show(v.Candidate)}
		if v.Candidate != nil {
			row.HeldOut = v.Candidate.N
		}
		rows = append(rows, row)
	}
	return map[string]any{"Rows": rows, "Promoted": promoted}, ""
}

// series reads the operations time series as the API's series route does:
// since truncated to the resolution, finer points rolled up, and each
// point's mean and latency quantiles.
func (c *Console) series(r *http.Request, s *session, q graph.SeriesQuery) ([]seriesPoint, error) {
	if err := c.allow(r, s, http.MethodGet, routeSeries); err != nil {
		return nil, err
	}
	q.Since = graph.Truncate(q.Since, q.Res)
	pts, err := analytics.SeriesAt(r.Context(), c.d.Store, q)
	if err != nil {
		return nil, err
	}
	out := make([]seriesPoint, 0, len(pts))
	for _, p := range pts {
		v := seriesPoint{Series: p.Series, At: p.At, Count: p.Count, Sum: p.Sum}
		if p.Count > 0 {
			v.Mean = p.Sum / p.Count
		}
		if p.Hist != nil {
			v.P50, v.P95 = p.Quantile(0.5), p.Quantile(0.95)
		}
		out = append(out, v)
	}
	return out, nil
}
