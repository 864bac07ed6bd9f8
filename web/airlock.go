package web

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/airlock/review"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// The API routes the airlock's pages stand for (api.Rules decides).
const (
	routePending  = "/api/v1/tools/pending"
	routeReview   = "/api/v1/tools/pending/:id"
	routeTimeline = "/api/v1/tools/pending/:id/timeline"
	routeApprove  = "/api/v1/tools/pending/:id/approve"
	routeReject   = "/api/v1/tools/pending/:id/reject"
	routeDecided  = "/api/v1/tools/reviews"
	routeSources  = "/api/v1/tools/sources"
	routeScan     = "/api/v1/tools/sources/scan"
	routeSource   = "/api/v1/tools/sources/:id"
	routeNotes    = "/api/v1/notifications"
	routeEnable   = "/api/v1/tools/:toolId/enable"
)

// decisionWait is how long a decision from the console waits for the
// review's outcome before the page says it is still working.
const decisionWait = 2 * time.Minute

// firstScanWait is how long adding a source waits for its first scan.
const firstScanWait = 60 * time.Second

// reviews returns the review service, or the error of an airlock that
// this process does not run.
func (c *Console) reviewService() (*review.Service, error) {
	if c.d.Reviews == nil {
		return nil, notRunning("the airlock")
	}
	return c.d.Reviews, nil
}

func (c *Console) reviews(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	items, err := func() ([]review.Pending, error) {
		svc, err := c.reviewService()
		if err != nil {
			return nil, err
		}
		if err := c.allow(r, s, http.MethodGet, routePending); err != nil {
			return nil, err
		}
		return svc.Pending(r.Context())
	}()
	code, msg := 0, ""
	if err != nil {
		code, msg = c.problem(r, err)
	}
	c.page(w, r, s, okOr(code), "reviews", map[string]any{"Items": items, "Error": msg})
}

// reviewOp is one operation of a review, marked when it was onboarded;
// ToolID is empty when it may name a tool the reader may not execute.
type reviewOp struct {
	Name, Method, Path, Summary, ToolID string
	Onboarded                           bool
}

func (c *Console) review(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	id := r.PathValue("id")
	st, err := func() (review.State, error) {
		svc, err := c.reviewService()
		if err != nil {
			return review.State{}, err
		}
		if err := c.allow(r, s, http.MethodGet, routeReview); err != nil {
			return review.State{}, err
		}
		return svc.View(r.Context(), id, s.principal().Caller())
	}()
	if err != nil {
		code, msg := c.problem(r, err)
		next := "Pick one from the list of reviews."
		if code == http.StatusForbidden {
			next = "Only approvers and admins see reviews; sign in with such a key."
		}
		c.page(w, r, s, code, "error", map[string]any{"Title": "No such review", "Message": msg, "Next": next,
			"Back": "/ui/reviews", "BackLabel": "Pending reviews"})
		return
	}
	out := st.Outcome
	ops := make([]reviewOp, 0, len(st.Review.Operations))
	for _, o := range st.Review.Operations {
		op := reviewOp{Name: o.Name, Method: o.Method, Path: o.Path, Summary: o.Summary, ToolID: st.Review.Slug + "." + o.Name}
		op.Onboarded = out != nil && slices.Contains(out.ToolIDs, op.ToolID)
		if !op.Onboarded && out.Narrowed() {
			// Its tool may be one of those the reader may not execute,
			// whose ids View left out: the page does not spell it either.
			op.ToolID = ""
		}
		ops = append(ops, op)
	}
	var tl []review.TimelineEntry
	if err = c.allow(r, s, http.MethodGet, routeTimeline); err == nil {
		tl, err = c.d.Reviews.Timeline(r.Context(), id)
	}
	c.page(w, r, s, http.StatusOK, "review", map[string]any{"ID": id, "State": st, "Ops": ops, "Outcome": out, "Timeline": tl, "Build": newBuildView(st.Build),
		"TimelineError": c.errorText(r, err)})
}

func (c *Console) decided(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	cursor := r.URL.Query().Get("cursor")
	page, err := func() (review.DecidedPage, error) {
		svc, err := c.reviewService()
		if err != nil {
			return review.DecidedPage{}, err
		}
		if err := c.allow(r, s, http.MethodGet, routeDecided); err != nil {
			return review.DecidedPage{}, err
		}
		return svc.Decided(r.Context(), s.principal().Caller(), 25, cursor)
	}()
	code, msg := 0, ""
	if err != nil {
		code, msg = c.problem(r, err)
	}
	data := map[string]any{"Items": page.Reviews, "Error": msg, "Paged": cursor != ""}
	if page.Next != "" {
		data["Next"] = "/ui/decided?cursor=" + url.QueryEscape(page.Next)
	}
	c.page(w, r, s, okOr(code), "decided", data)
}

func (c *Console) approve(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	id := r.PathValue("id")
	back := "/ui/reviews/" + url.PathEscape(id)
	f := r.PostForm
	fail := func(msgs []string) { c.done(w, r, s, back, map[string]any{"ApproveErrors": msgs, "Form": f}) }
	form, errs := policyFromForm(f)
	if len(errs) > 0 {
		fail(errs)
		return
	}
	p, err := policyOf(form)
	if err != nil {
		fail([]string{err.Error()})
		return
	}
	res, err := c.decide(r, s, id, routeApprove, func(svc *review.Service, reviewer string) (review.DecisionResult, error) {
		return svc.Approve(r.Context(), id, reviewer, s.principal().Caller(), p, decisionWait)
	})
	if err != nil {
		_, msgs := c.problems(r, err)
		fail(msgs)
		return
	}
	c.decisionDone(w, r, s, back, res)
}

func (c *Console) reject(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	id := r.PathValue("id")
	back := "/ui/reviews/" + url.PathEscape(id)
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	if reason == "" || len(reason) > 2000 {
		c.done(w, r, s, back, map[string]any{"RejectError": "Give a reason (1 to 2000 characters).", "Reason": reason})
		return
	}
	res, err := c.decide(r, s, id, routeReject, func(svc *review.Service, reviewer string) (review.DecisionResult, error) {
		return svc.Reject(r.Context(), id, reviewer, s.principal().Caller(), reason, decisionWait)
	})
	if err != nil {
		_, msg := c.problem(r, err)
		c.done(w, r, s, back, map[string]any{"RejectError": msg, "Reason": r.PostFormValue("reason")})
		return
	}
	c.decisionDone(w, r, s, back, res)
}

// decide sends a decision through the review service as the signed-in
// reviewer, after the route's rule, and audits it as the route does.
func (c *Console) decide(r *http.Request, s *session, id, route string, send func(*review.Service, string) (review.DecisionResult, error)) (review.DecisionResult, error) {
	svc, err := c.reviewService()
	if err != nil {
		return review.DecisionResult{}, err
	}
	if err := c.allowOn(r, s, http.MethodPost, route, id); err != nil {
		return review.DecisionResult{}, err
	}
	res, err := send(svc, review.Reviewer(s.who, s.who.Caller()))
	c.record(r, s, http.MethodPost, route, id, err)
	return res, err
}

func (c *Console) decisionDone(w http.ResponseWriter, r *http.Request, s *session, back string, res review.DecisionResult) {
	if res.Outcome == nil {
		c.done(w, r, s, back, map[string]any{"Flash": "Decision recorded; the review is still working on it. Reload this page to see its outcome."})
		return
	}
	c.done(w, r, s, back, nil)
}

// policyOf reads the approve dialog's checked fields into a policy, as
// the API reads its JSON body (unknown fields refused).
func policyOf(form map[string]any) (airlock.Policy, error) {
	b, err := json.Marshal(form)
	if err != nil {
		return airlock.Policy{}, fmt.Errorf("policy: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	var p airlock.Policy
	if err := dec.Decode(&p); err != nil {
		return airlock.Policy{}, fmt.Errorf("policy: %w", err)
	}
	return p, nil
}

// policyFromForm reads the approve dialog; every field is checked here
// (and again by the review service), errors name the field as the page
// labels it.
func policyFromForm(f url.Values) (map[string]any, []string) {
	p := map[string]any{}
	var errs []string
	ints := []struct{ field, label string }{{"rateLimitPerMinute", "Rate limit per minute"}, {"quotaPerDay", "Quota per day"}}
	for _, x := range ints {
		v := strings.TrimSpace(f.Get(x.field))
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1_000_000_000 {
			errs = append(errs, fmt.Sprintf("%s must be a whole number ≥ 0, got %q", x.label, v))
			continue
		}
		p[x.field] = n
	}
	floats := []struct{ field, label string }{{"costPerCall", "Cost per call"}, {"softBudget", "Soft budget"}, {"hardBudget", "Hard budget"}}
	for _, x := range floats {
		v := strings.TrimSpace(f.Get(x.field))
		if v == "" {
			continue
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || n < 0 || math.IsInf(n, 0) || math.IsNaN(n) {
			errs = append(errs, fmt.Sprintf("%s must be a number ≥ 0, got %q", x.label, v))
			continue
		}
		p[x.field] = n
	}
	lists := []struct{ field, label string }{{"allowedRoles", "Allowed roles"}, {"allowedUsers", "Allowed users"}, {"allowedGroups", "Groups"}}
	for _, x := range lists {
		if v := splitList(f.Get(x.field)); len(v) > 0 {
			for _, item := range v {
				if len(item) > 100 {
					errs = append(errs, fmt.Sprintf("%s: %q is too long", x.label, item[:20]+"…"))
				}
			}
			p[x.field] = v
		}
	}
	if ops := f["operations"]; len(ops) > 0 {
		p["operations"] = ops
	} else if f.Get("operationsShown") != "" {
		errs = append(errs, "Operations to onboard: choose at least one operation")
	}
	if v := strings.TrimSpace(f.Get("baseUrl")); v != "" {
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Sprintf("Base URL must be an http(s) URL, got %q", v))
		} else {
			p["baseUrl"] = v
		}
	}
	if v := f.Get("requiredLevel"); v != "" {
		p["requiredLevel"] = v
	}
	return p, errs
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' }) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// ---- sources ----

func (c *Console) sources(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	srcs, err := func() (any, error) {
		svc, err := c.reviewService()
		if err != nil {
			return nil, err
		}
		if err := c.allow(r, s, http.MethodGet, routeSources); err != nil {
			return nil, err
		}
		return svc.Sources(r.Context())
	}()
	code, msg := 0, ""
	if err != nil {
		code, msg = c.problem(r, err)
	}
	c.page(w, r, s, okOr(code), "sources", map[string]any{"Sources": srcs, "Error": msg})
}

// sourceCall runs one source action through the review service after its
// route's rule, and audits it as the route does.
func (c *Console) sourceCall(r *http.Request, s *session, method, route, tool string, call func(*review.Service) error) error {
	svc, err := c.reviewService()
	if err != nil {
		return err
	}
	if err := c.allowOn(r, s, method, route, tool); err != nil {
		return err
	}
	err = call(svc)
	c.record(r, s, method, route, tool, err)
	return err
}

const sourcesPage = "/ui/sources"

func (c *Console) addSource(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	loc := strings.TrimSpace(r.PostFormValue("location"))
	if loc == "" || len(loc) > 2000 {
		c.done(w, r, s, sourcesPage, map[string]any{"FormError": "Give the spec's URL, file or folder (1 to 2000 characters).", "Location": loc})
		return
	}
	var added review.AddedSource
	err := c.sourceCall(r, s, http.MethodPost, routeSources, "", func(svc *review.Service) (err error) {
		added, err = svc.AddSource(r.Context(), s.principal().Caller(), airlock.Source{Type: airlock.SourceOpenAPI, Location: loc}, true, firstScanWait)
		return err
	})
	if err != nil {
		_, msg := c.problem(r, err)
		c.done(w, r, s, sourcesPage, map[string]any{"FormError": msg, "Location": loc})
		return
	}
	c.done(w, r, s, sourcesPage, addedFlash(added.Scan))
}

func (c *Console) scanSources(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	err := c.sourceCall(r, s, http.MethodPost, routeScan, "", func(svc *review.Service) error {
		_, err := svc.ScanAll(r.Context())
		return err
	})
	if err != nil {
		_, msg := c.problem(r, err)
		c.done(w, r, s, sourcesPage, map[string]any{"FormError": msg})
		return
	}
	c.done(w, r, s, sourcesPage, map[string]any{"Flash": "A scan of every source has started."})
}

func (c *Console) removeSource(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	id := r.PostFormValue("id")
	err := c.sourceCall(r, s, http.MethodDelete, routeSource, id, func(svc *review.Service) error { return svc.DeleteSource(r.Context(), id) })
	if err != nil {
		_, msg := c.problem(r, err)
		c.done(w, r, s, sourcesPage, map[string]any{"FormError": msg})
		return
	}
	c.done(w, r, s, sourcesPage, map[string]any{"Flash": "Source removed."})
}

// addedFlash says what adding the source did: a scan that failed, or
// found no spec, is an error on the page, never a green "scanned".
func addedFlash(sc *review.ScanOutcome) map[string]any {
	failed := func(why string) map[string]any {
		return map[string]any{"ScanError": "Source added, but its scan failed: " + why}
	}
	switch {
	case sc == nil:
		return map[string]any{"Flash": "Source added; it was not scanned."}
	case sc.Status == review.ScanRunning:
		return map[string]any{"Flash": "Source added; its scan is still running. Check its specs and last error below."}
	case sc.Error != "":
		return failed(sc.Error)
	case sc.Report == nil:
		return failed("the scan reported nothing")
	case sc.Report.Error != "":
		return failed(sc.Report.Error)
	case sc.Report.Specs == 0:
		why := "it found no spec"
		if len(sc.Report.Errors) > 0 {
			why += ": " + strings.Join(sc.Report.Errors, "; ")
		}
		return failed(why)
	}
	out := map[string]any{"Flash": fmt.Sprintf("Source added and scanned: %d spec(s), %d new, waiting in Pending reviews.", sc.Report.Specs, len(sc.Report.NewSpecs))}
	if len(sc.Report.Errors) > 0 {
		out["ScanError"] = "Some of its specs could not be read: " + strings.Join(sc.Report.Errors, "; ")
	}
	return out
}

// ---- notifications ----

func (c *Console) notifications(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	var items []airlock.Notification
	err := c.allow(r, s, http.MethodGet, routeNotes)
	if err == nil && c.d.Notes == nil {
		err = notRunning("the airlock's notifications")
	}
	if err == nil {
		items, err = c.d.Notes.List(r.Context(), 100)
	}
	code, msg := 0, ""
	if err != nil {
		code, msg = c.problem(r, err)
	}
	c.page(w, r, s, okOr(code), "notifications", map[string]any{"Items": items, "Error": msg})
}

func (c *Console) enable(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	const back = "/ui/notifications"
	toolID := r.PathValue("id")
	var ids []string
	err := c.allowOn(r, s, http.MethodPost, routeEnable, toolID)
	if err == nil {
		slug, _, _ := strings.Cut(toolID, ".")
		switch {
		case c.d.Enabler == nil:
			err = notRunning("the airlock's health checks")
		case slug == "":
			err = fault.Malformed("toolId", "must be <api>.<operation> or <api>, got %q", toolID)
		default:
			ids, err = c.d.Enabler.Enable(r.Context(), slug, "re-enabled by "+s.who.Caller().UserID)
		}
		c.record(r, s, http.MethodPost, routeEnable, toolID, err)
	}
	if err != nil {
		_, msg := c.problem(r, err)
		c.done(w, r, s, back, map[string]any{"FormError": msg})
		return
	}
	c.done(w, r, s, back, map[string]any{"Flash": "Re-enabled: " + strings.Join(ids, ", ")})
}
