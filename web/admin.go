package web

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/analytics"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// The API routes the operators' pages stand for (api.Rules decides).
const (
	routeKeys      = "/api/v1/admin/keys"
	routeKey       = "/api/v1/admin/keys/:id"
	routeAudit     = "/api/v1/admin/audit"
	routeAnalytics = "/api/v1/tools/admin/analytics"
	routeGaps      = "/api/v1/gaps"
	routeSeries    = "/api/v1/tools/admin/series"
	routeVersions  = "/api/v1/admin/ranking/versions"
)

// keyRow is one API key as the keys page lists it.
type keyRow struct {
	ID, Owner, Description, Level, CreatedBy string
	Roles, Groups                            []string
	CreatedAt, ExpiresAt, RevokedAt          time.Time
	// LastUse is the key's newest audited call (zero: none recorded).
	LastUse       time.Time
	LastUseAction string
	// MayRevoke is identity's level rule for the signed-in key (the key
	// service applies it again when the form is sent).
	MayRevoke bool
}

func keyRowOf(k graph.APIKey) keyRow {
	return keyRow{ID: k.ID, Owner: k.Owner, Description: k.Description, Level: k.Level, CreatedBy: k.CreatedBy, Roles: k.Roles, Groups: k.Groups,
		CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt}
}

// keysShownWithLastUse bounds the audit look-ups the keys page makes.
const keysShownWithLastUse = 100

func (c *Console) keys(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	ctx := r.Context()
	var list []graph.APIKey
	err := c.allow(r, s, http.MethodGet, routeKeys)
	if err == nil {
		list, err = c.d.Keys.List(ctx)
	}
	if err != nil {
		code, msg := c.problem(r, err)
		c.page(w, r, s, code, "error", map[string]any{"Title": "Keys", "Message": msg, "Next": "Only admins manage keys; sign in with an admin key."})
		return
	}
	// Newest first; the last use is the newest audit record of the key.
	slices.Reverse(list)
	rows := make([]keyRow, len(list))
	var auditErr error
	if c.d.Audit == nil {
		auditErr = notRunning("the audit log")
	} else {
		auditErr = c.allow(r, s, http.MethodGet, routeAudit)
	}
	for i, k := range list {
		rows[i] = keyRowOf(k)
		rows[i].MayRevoke = k.RevokedAt.IsZero() && k.ID != s.who.KeyID && identity.MayManage(s.who, k.Level, "revoke") == nil
		if i >= keysShownWithLastUse || auditErr != nil {
			continue
		}
		page, err := c.d.Audit.Query(ctx, graph.AuditQuery{Actor: "key:" + k.ID, Limit: 1})
		if err != nil {
			auditErr = err
			continue
		}
		if len(page.Items) > 0 {
			rows[i].LastUse, rows[i].LastUseAction = page.Items[0].At, page.Items[0].Action
		}
	}
	data := map[string]any{"Keys": rows, "Self": s.who.KeyID, "Levels": []string{"guest", "user", "admin", "owner"}}
	if auditErr != nil {
		data["Error"] = "Last uses unknown: " + c.errorText(r, auditErr)
	}
	c.page(w, r, s, http.StatusOK, "keys", data)
}

const keysPage = "/ui/keys"

func (c *Console) createKey(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	f := r.PostForm
	req := identity.NewKey{Owner: strings.TrimSpace(f.Get("owner")), Level: f.Get("level"), Description: strings.TrimSpace(f.Get("description")),
		Roles: splitList(f.Get("roles")), Groups: splitList(f.Get("groups"))}
	if v := strings.TrimSpace(f.Get("expires")); v != "" {
		day, err := time.Parse("2006-01-02", v)
		if err != nil {
			c.done(w, r, s, keysPage, map[string]any{"FormErrors": []string{fmt.Sprintf("Expires must be a date such as 2027-01-31, got %q", v)}, "Form": f})
			return
		}
		req.ExpiresAt = day.UTC()
	}
	var k graph.APIKey
	var secret string
	err := c.allow(r, s, http.MethodPost, routeKeys)
	if err == nil {
		k, secret, err = c.d.Keys.Create(r.Context(), s.who, req)
		c.record(r, s, http.MethodPost, routeKeys, "", err)
	}
	if err != nil {
		_, msgs := c.problems(r, err)
		c.done(w, r, s, keysPage, map[string]any{"FormErrors": msgs, "Form": f})
		return
	}
	// The secret rides in the session's one-time flash: the GET after the
	// redirect shows it, a reload no longer does.
	c.done(w, r, s, keysPage, map[string]any{"Created": keyRowOf(k), "Secret": secret})
}

func (c *Console) revokeKey(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	id := r.PathValue("id")
	err := c.allowOn(r, s, http.MethodDelete, routeKey, id)
	if err == nil {
		if s.who.KeyID == id {
			err = fault.Invalid("id", "a key cannot revoke itself; use another admin key")
		} else {
			err = c.d.Keys.Revoke(r.Context(), s.who, id)
		}
		c.record(r, s, http.MethodDelete, routeKey, id, err)
	}
	if err != nil {
		_, msg := c.problem(r, err)
		c.done(w, r, s, keysPage, map[string]any{"RevokeError": msg})
		return
	}
	c.done(w, r, s, keysPage, map[string]any{"Flash": "Key " + id + " revoked: it stops working at once."})
}

// auditRow is one audit event with a link to its object.
type auditRow struct {
	graph.AuditEvent
	Link string
}

// objectLink is the console page of what an audit event was about.
func objectLink(route, tool string) string {
	if tool == "" {
		return ""
	}
	switch {
	case strings.Contains(route, "/tools/pending/"):
		return "/ui/reviews/" + url.PathEscape(tool)
	case strings.Contains(route, "/admin/keys/"):
		return "/ui/keys#key-" + url.PathEscape(tool)
	case strings.Contains(route, "/tools/sources"):
		return "/ui/sources"
	case strings.Contains(route, ":toolId"), strings.HasPrefix(route, "mcp"), strings.Contains(route, "/tools/register"), strings.Contains(route, "/tools/batch-register"):
		return "/ui/tools/" + url.PathEscape(tool)
	}
	return ""
}

func (c *Console) auditLog(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	q := r.URL.Query()
	aq := graph.AuditQuery{Actor: strings.TrimSpace(q.Get("actor")), Action: strings.TrimSpace(q.Get("action")), Tool: strings.TrimSpace(q.Get("tool")),
		Before: strings.TrimSpace(q.Get("before")), Limit: 50}
	data := map[string]any{"Actor": q.Get("actor"), "Action": q.Get("action"), "Tool": q.Get("tool"), "Since": q.Get("since"), "Until": q.Get("until"), "Before": q.Get("before")}
	// The form's times are the browser's datetime-local, read as UTC.
	for _, k := range []string{"since", "until"} {
		x := strings.TrimSpace(q.Get(k))
		if x == "" {
			continue
		}
		t, err := time.Parse("2006-01-02T15:04", x)
		if err != nil {
			if t, err = time.Parse(time.RFC3339, x); err != nil {
				data["Error"] = fmt.Sprintf("%s must be a time such as 2026-11-24T10:00, got %q", strings.ToUpper(k[:1])+k[1:], x)
				c.page(w, r, s, http.StatusBadRequest, "audit", data)
				return
			}
		}
		if k == "since" {
			aq.Since = t.UTC()
		} else {
			aq.Until = t.UTC()
		}
	}
	// A since in the future is refused as the API refuses it: the empty
	// page would read as "nothing happened".
	if !aq.Since.IsZero() {
		if err := analytics.CheckSince(aq.Since, c.now()); err != nil {
			code, msg := c.problem(r, err)
			data["Error"] = msg
			c.page(w, r, s, code, "audit", data)
			return
		}
	}
	var page graph.AuditPage
	err := c.allow(r, s, http.MethodGet, routeAudit)
	if err == nil && c.d.Audit == nil {
		err = notRunning("the audit log")
	}
	if err == nil {
		page, err = c.d.Audit.QueryAs(r.Context(), s.principal().Caller(), aq)
	}
	if err != nil {
		code, msg := c.problem(r, err)
		if code == http.StatusForbidden {
			c.page(w, r, s, code, "error", map[string]any{"Title": "Audit log", "Message": msg, "Next": "Only admins read the audit log; sign in with an admin key."})
			return
		}
		data["Error"] = msg
		c.page(w, r, s, code, "audit", data)
		return
	}
	rows := make([]auditRow, len(page.Items))
	for i, e := range page.Items {
		rows[i] = auditRow{AuditEvent: e, Link: objectLink(e.Route, e.Tool)}
	}
	data["Items"] = rows
	data["Newest"], data["Older"] = pageLinks("/ui/audit", q, []string{"actor", "action", "tool", "since", "until"}, "before", page.Next)
	c.page(w, r, s, http.StatusOK, "audit", data)
}

// pageLinks are a paged list's links: the first page with the request's
// filters kept, and the next page (cursorKey set to next), "" on the last.
func pageLinks(path string, q url.Values, filters []string, cursorKey, next string) (first, more string) {
	keep := url.Values{}
	for _, k := range filters {
		if x := q.Get(k); x != "" {
			keep.Set(k, x)
		}
	}
	first = path + "?" + keep.Encode()
	if next != "" {
		keep.Set(cursorKey, next)
		more = path + "?" + keep.Encode()
	}
	return first, more
}

// report builds the analytics report (the API's live report) for top tools.
func (c *Console) report(r *http.Request, s *session, top int) (analytics.Report, error) {
	if err := c.allow(r, s, http.MethodGet, routeAnalytics); err != nil {
		return analytics.Report{}, err
	}
	// The report's lists name only the tools the signed-in key may execute.
	caller := s.principal().Caller()
	return analytics.Build(r.Context(), c.d.Store, c.d.Runs, analytics.Options{Top: top, Caller: &caller})
}

// gapRun is one recent fulfilment run on the gaps page.
type gapRun struct {
	Verb, Branch, Status, StartedAt, Link string
	DurationMs                            int64
}

func (c *Console) gaps(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	// The page stands for GET /api/v1/gaps; the recent runs come from the
	// analytics report, which only admins may read, so an approver sees
	// the gaps without that section rather than a refusal.
	if err := c.allow(r, s, http.MethodGet, routeGaps); err != nil {
		code, msg := c.problem(r, err)
		c.page(w, r, s, code, "error", map[string]any{"Title": "Runs & gaps", "Message": msg, "Next": "Approvers and admins see the gaps."})
		return
	}
	// ?status= is read as the API reads it (open by default, closed or
	// all); another value is a 400 naming it, not a page of open gaps.
	q := r.URL.Query()
	shown := graph.GapOpen
	if q.Has("status") {
		shown = q.Get("status")
	}
	status, err := graph.ParseGapStatus(shown)
	if err != nil {
		code, msg := c.problem(r, err)
		c.page(w, r, s, code, "error", map[string]any{"Title": "Runs & gaps", "Message": msg, "Back": "/ui/gaps", "BackLabel": "Runs & gaps"})
		return
	}
	data := map[string]any{"GapStatus": shown}
	code := 0
	if showRuns := c.allow(r, s, http.MethodGet, routeAnalytics) == nil; showRuns {
		rep, err := c.report(r, s, 50)
		if err != nil {
			var msg string
			code, msg = c.problem(r, err)
			data["Error"] = msg
		}
		runs := make([]gapRun, 0, len(rep.RecentRuns))
		for _, x := range rep.RecentRuns {
			link := ""
			if c.ui != "" {
				link = fmt.Sprintf("%s/namespaces/%s/workflows/%s/%s/history", c.ui, url.PathEscape(c.ns), url.PathEscape(x.WorkflowID), url.PathEscape(x.RunID))
			}
			runs = append(runs, gapRun{Verb: x.Verb, Branch: x.Branch, Status: x.Status, StartedAt: x.StartedAt.UTC().Format(time.RFC3339), Link: link, DurationMs: x.DurationMs})
		}
		all := ""
		if c.ui != "" {
			all = c.ui + "/namespaces/" + url.PathEscape(c.ns) + "/workflows?query=" + url.QueryEscape(`WorkflowType="NovelVerbWorkflow"`)
		}
		data["ShowRuns"], data["Fulfilments"], data["Runs"], data["RunsAvailable"], data["RunsError"], data["AllRuns"] = true, rep.Fulfilments, runs, rep.RunsAvailable, rep.RunsError, all
	}
	open, err := c.d.Store.ListGaps(r.Context(), graph.GapQuery{Status: status, Limit: 50})
	if err == nil {
		// A gap names only the tools the signed-in key may execute.
		open, err = access.VisibleGaps(r.Context(), c.d.Store, open, s.principal().Caller())
	}
	if err != nil {
		var gmsg string
		var gcode int
		gcode, gmsg = c.problem(r, err)
		code = max(code, gcode)
		data["GapsError"] = gmsg
	}
	data["Gaps"] = open
	c.page(w, r, s, okOr(code), "gaps", data)
}
