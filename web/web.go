// Package web is the review console at /ui/: pages for
// approvers and operators, server-rendered with html/template and embedded
// in the binary (no script library, no CDN, no build step: every action is
// a plain HTML form, so it works with the keyboard and without JavaScript).
//
// The console is a thin edge over the REST API: each page calls the API
// in-process with the signed-in user's own key, so the authorization
// table, the visibility rule, validation and the audit log are exactly
// REST's, and a page shows only what that identity may see. Sign-in takes
// an API key into a server-side session behind an HttpOnly, SameSite=Strict
// cookie; every form carries the session's CSRF token.
package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolsmith/toolsmith/identity"
)

//go:embed templates/*.html static/*
var assets embed.FS

// CookieName is the session cookie.
const CookieName = "toolsmith_session"

// signinCookie carries the sign-in form's CSRF token.
const signinCookie = "toolsmith_signin"

// maxForm bounds a form's body.
const maxForm = 64 << 10

// SessionTTL is how long a session lives without use.
const SessionTTL = 12 * time.Hour

// Console serves /ui/.
type Console struct {
	api   http.Handler // the REST API (the same server's engine)
	tmpl  *template.Template
	mu    sync.Mutex
	sess  map[string]*session
	now   func() time.Time
	ui    string // the Temporal UI base URL, for run links
	ns    string // the runs' Temporal namespace
	files http.Handler
}

type session struct {
	key     string
	csrf    string
	who     identity.Principal
	expires time.Time
	// flash is what a POST left for the GET it redirected to (post/
	// redirect/get): its outcome, its errors and the form to refill.
	flash *flash
}

// flash is one POST's result, shown once by the page at path.
type flash struct {
	path string
	data map[string]any
}

// Config configures the console.
type Config struct {
	// TemporalUI is the Temporal Web UI's base URL; runs link to it (none
	// when empty).
	TemporalUI string
	// Namespace is the Temporal namespace of the runs (default "default").
	Namespace string
}

// New returns the console over api (call SetAPI when the API handler is
// built after the console, as in cmd/toolsmith).
func New(api http.Handler, cfg Config) *Console {
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	t := template.Must(template.New("").Funcs(template.FuncMap{
		"pct":   func(v float64) string { return strconv.FormatFloat(math.Max(0, math.Min(100, v*100)), 'f', 0, 64) },
		"num":   func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) },
		"join":  strings.Join,
		"list":  func(xs ...string) []string { return xs },
		"since": func(s string) string { return age(s) },
		"ms":    func(ms int64) string { return duration(ms) },
		"has":   func(xs []string, x string) bool { return slices.Contains(xs, x) },
	}).ParseFS(assets, "templates/*.html"))
	static, _ := fs.Sub(assets, "static")
	return &Console{api: api, tmpl: t, sess: map[string]*session{}, now: time.Now, ui: strings.TrimRight(cfg.TemporalUI, "/"), ns: cfg.Namespace,
		files: http.StripPrefix("/ui/static/", http.FileServer(http.FS(static)))}
}

// SetAPI sets the REST handler the console calls.
func (c *Console) SetAPI(api http.Handler) { c.api = api }

// ServeHTTP routes /ui/… requests.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "same-origin")
	if r.URL.Path == "/favicon.ico" { // browsers ask the root for it
		http.Redirect(w, r, "/ui/static/favicon.svg", http.StatusMovedPermanently)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/ui")
	if strings.HasPrefix(path, "/static/") {
		c.files.ServeHTTP(w, r)
		return
	}
	s := c.session(r)
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil {
			c.page(w, r, s, http.StatusBadRequest, "error", map[string]any{"Message": "The form could not be read: " + err.Error()})
			return
		}
		want := ""
		switch {
		case path == "/signin": // before a session exists the token is a cookie's (double submit)
			if ck, err := r.Cookie(signinCookie); err == nil {
				want = ck.Value
			}
		case s != nil:
			want = s.csrf
		}
		if want == "" || subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(want)) != 1 {
			c.page(w, r, s, http.StatusForbidden, "error", map[string]any{"Message": "This form has expired (its security token does not match your session). Reload the page and try again."})
			return
		}
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case path == "" || path == "/":
		http.Redirect(w, r, c.home(s), http.StatusSeeOther)
	case parts[0] == "dashboard" && len(parts) == 1:
		c.dashboard(w, r, s)
	case parts[0] == "signin" && r.Method == http.MethodGet:
		c.signInPage(w, r, http.StatusOK, c.signInError(w, r))
	case parts[0] == "signin" && r.Method == http.MethodPost:
		c.signIn(w, r)
	case parts[0] == "signout" && r.Method == http.MethodPost:
		c.signOut(w, r, s)
	case parts[0] == "reviews" && len(parts) == 1:
		c.reviews(w, r, s)
	case parts[0] == "decided" && len(parts) == 1:
		c.decided(w, r, s)
	case parts[0] == "reviews" && len(parts) == 2:
		c.review(w, r, s, parts[1])
	case parts[0] == "reviews" && len(parts) == 3 && r.Method == http.MethodPost && (parts[2] == "approve" || parts[2] == "reject"):
		c.decide(w, r, s, parts[1], parts[2])
	case parts[0] == "tools" && len(parts) == 1:
		c.tools(w, r, s)
	case parts[0] == "tools" && len(parts) == 2:
		c.tool(w, r, s, parts[1])
	case parts[0] == "tools" && len(parts) == 3 && parts[2] == "enable" && r.Method == http.MethodPost:
		c.enable(w, r, s, parts[1])
	case parts[0] == "sources" && len(parts) == 1:
		c.sources(w, r, s)
	case parts[0] == "sources" && len(parts) == 2 && r.Method == http.MethodPost:
		c.sourceAction(w, r, s, parts[1])
	case parts[0] == "notifications":
		c.notifications(w, r, s)
	case parts[0] == "gaps":
		c.gaps(w, r, s)
	case parts[0] == "keys" && len(parts) == 1 && r.Method == http.MethodGet:
		c.keys(w, r, s)
	case parts[0] == "keys" && len(parts) == 2 && parts[1] == "create" && r.Method == http.MethodPost:
		c.createKey(w, r, s)
	case parts[0] == "keys" && len(parts) == 3 && parts[2] == "revoke" && r.Method == http.MethodPost:
		c.revokeKey(w, r, s, parts[1])
	case parts[0] == "audit" && len(parts) == 1:
		c.auditLog(w, r, s)
	default:
		c.page(w, r, s, http.StatusNotFound, "error", map[string]any{"Title": "Page not found", "Message": "There is no page " + r.URL.Path + ".",
			"Next": "Use the sections above, or start from the console's first page."})
	}
}

// ---- sessions ----

func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func (c *Console) session(r *http.Request) *session {
	ck, err := r.Cookie(CookieName)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.sess[ck.Value]
	if !ok || c.now().After(s.expires) {
		delete(c.sess, ck.Value)
		return nil
	}
	s.expires = c.now().Add(SessionTTL)
	return s
}

// signinErrorCookie carries a refused sign-in's message to the GET after it.
const signinErrorCookie = "toolsmith_signin_error"

// signInError reads and clears a refused sign-in's message.
func (c *Console) signInError(w http.ResponseWriter, r *http.Request) string {
	ck, err := r.Cookie(signinErrorCookie)
	if err != nil {
		return ""
	}
	http.SetCookie(w, &http.Cookie{Name: signinErrorCookie, Value: "", Path: "/ui/signin", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	b, err := base64.RawURLEncoding.DecodeString(ck.Value)
	if err != nil || len(b) > 1000 {
		return ""
	}
	return string(b)
}

// signInPage renders the sign-in form with a fresh token, kept in a
// short-lived cookie the form must echo.
func (c *Console) signInPage(w http.ResponseWriter, r *http.Request, code int, msg string) {
	token := randomToken()
	http.SetCookie(w, &http.Cookie{Name: signinCookie, Value: token, Path: "/ui/signin", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: 3600})
	c.page(w, r, nil, code, "signin", map[string]any{"Error": msg, "SigninCSRF": token})
}

func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimSpace(r.PostFormValue("key"))
	// A refusal redirects to the sign-in page too (post/redirect/get); no
	// session exists yet, so the message rides in a short-lived cookie.
	fail := func(msg string) {
		http.SetCookie(w, &http.Cookie{Name: signinErrorCookie, Value: base64.RawURLEncoding.EncodeToString([]byte(msg)), Path: "/ui/signin",
			HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: 60})
		http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
	}
	switch {
	case key == "":
		fail("Paste an API key (tsk_…) to sign in.")
		return
	case len(key) > 200:
		fail("That is too long to be an API key.")
		return
	}
	var who struct {
		Principal identity.Principal `json:"principal"`
	}
	code, msg := c.call(r.Context(), key, http.MethodGet, "/api/v1/whoami", nil, &who)
	if code != http.StatusOK || !who.Principal.Authenticated() {
		fail("That key was refused: " + msg)
		return
	}
	id := randomToken()
	c.mu.Lock()
	for k, s := range c.sess { // sweep expired sessions
		if c.now().After(s.expires) {
			delete(c.sess, k)
		}
	}
	ns := &session{key: key, csrf: randomToken(), who: who.Principal, expires: c.now().Add(SessionTTL)}
	c.sess[id] = ns
	c.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: id, Path: "/ui", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, MaxAge: int(SessionTTL.Seconds())})
	http.Redirect(w, r, c.home(ns), http.StatusSeeOther)
}

// home is the console's first page: the dashboard for admins (operators),
// the pending reviews for everyone else.
func (c *Console) home(s *session) string {
	if s != nil && identity.RuleAdmin.Check(s.who) == nil {
		return "/ui/dashboard"
	}
	return "/ui/reviews"
}

func (c *Console) signOut(w http.ResponseWriter, r *http.Request, s *session) {
	if ck, err := r.Cookie(CookieName); err == nil {
		c.mu.Lock()
		delete(c.sess, ck.Value)
		c.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/ui", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
}

// ---- calling the API ----

// call sends one request to the REST API with the session's key and
// decodes the envelope's data into out; it returns the status and, on
// failure, the API's message (each field it names once).
func (c *Console) call(ctx context.Context, key, method, path string, body any, out any) (int, string) {
	code, msgs := c.callAll(ctx, key, method, path, body, out)
	return code, strings.Join(msgs, "; ")
}

// callAll is call with the failure's messages apart: one for each field
// the API names (each once), or the API's one message.
func (c *Console) callAll(ctx context.Context, key, method, path string, body any, out any) (int, []string) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return http.StatusInternalServerError, []string{err.Error()}
		}
		rd = bytes.NewReader(b)
	}
	req := httptest.NewRequest(method, path, rd).WithContext(ctx)
	req.RemoteAddr = "127.0.0.1:0"
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	rec := httptest.NewRecorder()
	c.api.ServeHTTP(rec, req)
	var env struct {
		Data  json.RawMessage `json:"data"`
		Error *struct {
			Message string `json:"message"`
			Fields  []struct {
				Path    string `json:"path"`
				Message string `json:"message"`
			} `json:"fields"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
		return rec.Code, []string{fmt.Sprintf("unexpected answer (HTTP %d)", rec.Code)}
	}
	if env.Error != nil {
		// A validation error's message already lists its fields: the
		// fields, when there are any, are the whole story.
		if len(env.Error.Fields) == 0 {
			return rec.Code, []string{env.Error.Message}
		}
		var msgs []string
		for _, f := range env.Error.Fields {
			if m := f.Path + ": " + f.Message; !slices.Contains(msgs, m) {
				msgs = append(msgs, m)
			}
		}
		return rec.Code, msgs
	}
	if out != nil && len(env.Data) > 0 {
		_ = json.Unmarshal(env.Data, out)
	}
	return rec.Code, nil
}

func (s *session) keyOrGuest() string {
	if s == nil {
		return ""
	}
	return s.key
}

// page renders a page inside the layout.
func (c *Console) page(w http.ResponseWriter, r *http.Request, s *session, code int, name string, data map[string]any) {
	if data == nil {
		data = map[string]any{}
	}
	data["Page"] = name
	data["Session"] = s
	if s != nil && r.Method == http.MethodGet {
		c.mu.Lock()
		f := s.flash
		if f != nil && f.path == r.URL.Path {
			s.flash = nil
		} else {
			f = nil
		}
		c.mu.Unlock()
		if f != nil {
			for k, v := range f.data {
				data[k] = v
			}
		}
	}
	if s != nil {
		data["CSRF"] = s.csrf
		data["Who"] = s.who
		data["CanApprove"] = identity.RuleApprover.Check(s.who) == nil
		data["IsAdmin"] = identity.RuleAdmin.Check(s.who) == nil
	}
	var buf bytes.Buffer
	if err := c.tmpl.ExecuteTemplate(&buf, name+".html", data); err != nil {
		http.Error(w, "console: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// done ends a POST (post/redirect/get): it leaves data (the outcome, or
// the errors and the form to refill) for the page at to, and redirects
// there with 303, so a reload shows the page again and sends nothing.
func (c *Console) done(w http.ResponseWriter, r *http.Request, s *session, to string, data map[string]any) {
	if s != nil && len(data) > 0 {
		path := to
		if i := strings.IndexByte(path, '?'); i >= 0 {
			path = path[:i]
		}
		c.mu.Lock()
		s.flash = &flash{path: path, data: data}
		c.mu.Unlock()
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

func (c *Console) needSignIn(w http.ResponseWriter, r *http.Request, s *session) bool {
	if s != nil {
		return false
	}
	http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
	return true
}

// ---- pages ----

type pendingItem struct {
	ID, Title, Location, Status, StartedAt string
	Operations, Warnings                   int
}

func (c *Console) reviews(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	var out struct {
		Pending []pendingItem `json:"pending"`
	}
	code, msg := c.call(r.Context(), s.key, http.MethodGet, "/api/v1/tools/pending", nil, &out)
	c.page(w, r, s, okOr(code), "reviews", map[string]any{"Items": out.Pending, "Error": msg})
}

// reviewState is what GET /tools/pending/{id} answers.
type reviewState struct {
	ID    string `json:"id"`
	State struct {
		Status string `json:"status"`
		Review struct {
			Title, Location, Slug, Version, License, Description string
			NameTakenBy                                          string `json:"nameTakenBy"`
			NamePending                                          bool   `json:"namePending"`
			Servers, AuthSchemes, Warnings                       []string
			Operations                                           []struct{ Name, Method, Path, Summary string }
		} `json:"review"`
		Outcome *outcome `json:"outcome"`
		Gaps    []string `json:"gaps"`
		// Build is set for a tool built from scratch (web/build.go).
		Build *buildReview `json:"build"`
	} `json:"state"`
}

type outcome struct {
	Status, Stage, Reason, Reviewer string
	ToolIDs                         []string `json:"toolIds"`
	ClosedGaps                      []string `json:"closedGaps"`
	Warnings                        []string
}

func (c *Console) review(w http.ResponseWriter, r *http.Request, s *session, id string) {
	if c.needSignIn(w, r, s) {
		return
	}
	var st reviewState
	code, msg := c.call(r.Context(), s.key, http.MethodGet, "/api/v1/tools/pending/"+url.PathEscape(id), nil, &st)
	if code >= 400 {
		next := "Pick one from the list of reviews."
		if code == http.StatusForbidden {
			next = "Only approvers and admins see reviews; sign in with such a key."
		}
		c.page(w, r, s, code, "error", map[string]any{"Title": "No such review", "Message": msg, "Next": next,
			"Back": "/ui/reviews", "BackLabel": "Pending reviews"})
		return
	}
	out := st.State.Outcome
	ops := make([]reviewOp, 0, len(st.State.Review.Operations))
	for _, o := range st.State.Review.Operations {
		op := reviewOp{Name: o.Name, Method: o.Method, Path: o.Path, Summary: o.Summary, ToolID: st.State.Review.Slug + "." + o.Name}
		op.Onboarded = out != nil && slices.Contains(out.ToolIDs, op.ToolID)
		ops = append(ops, op)
	}
	var tl struct {
		Timeline []struct {
			At                               time.Time
			Kind, What, Outcome, Who, Detail string
			Ms                               int64
		} `json:"timeline"`
	}
	_, tlErr := c.call(r.Context(), s.key, http.MethodGet, "/api/v1/tools/pending/"+url.PathEscape(id)+"/timeline", nil, &tl)
	c.page(w, r, s, http.StatusOK, "review", map[string]any{"ID": id, "State": st.State, "Ops": ops, "Outcome": out, "Timeline": tl.Timeline, "TimelineError": tlErr})
}

func (c *Console) decided(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	v := url.Values{"limit": {"25"}}
	if x := r.URL.Query().Get("cursor"); x != "" {
		v.Set("cursor", x)
	}
	var out struct {
		Reviews []struct {
			ID, Title, Location, Status, Reviewer, Reason string
			ToolIDs                                       []string `json:"toolIds"`
			ClosedAt                                      time.Time
		} `json:"reviews"`
		NextCursor string `json:"nextCursor"`
	}
	code, msg := c.call(r.Context(), s.key, http.MethodGet, "/api/v1/tools/reviews?"+v.Encode(), nil, &out)
	data := map[string]any{"Items": out.Reviews, "Error": msg, "Paged": v.Get("cursor") != ""}
	if out.NextCursor != "" {
		data["Next"] = "/ui/decided?cursor=" + url.QueryEscape(out.NextCursor)
	}
	c.page(w, r, s, okOr(code), "decided", data)
}

// reviewOp is one operation of a review, marked when it was onboarded.
type reviewOp struct {
	Name, Method, Path, Summary, ToolID string
	Onboarded                           bool
}

func (c *Console) decide(w http.ResponseWriter, r *http.Request, s *session, id, verb string) {
	if c.needSignIn(w, r, s) {
		return
	}
	back := "/ui/reviews/" + url.PathEscape(id)
	f := r.PostForm
	var body map[string]any
	if verb == "reject" {
		reason := strings.TrimSpace(f.Get("reason"))
		if reason == "" || len(reason) > 2000 {
			c.done(w, r, s, back, map[string]any{"RejectError": "Give a reason (1 to 2000 characters).", "Reason": reason})
			return
		}
		body = map[string]any{"reason": reason}
	} else {
		p, errs := policyFromForm(f)
		if len(errs) > 0 {
			c.done(w, r, s, back, map[string]any{"ApproveErrors": errs, "Form": f})
			return
		}
		body = map[string]any{"policy": p}
	}
	var res struct {
		Outcome *outcome `json:"outcome"`
	}
	code, msgs := c.callAll(r.Context(), s.key, http.MethodPost, "/api/v1/tools/pending/"+url.PathEscape(id)+"/"+verb+"?wait=2m", body, &res)
	switch {
	case code >= 400 && verb == "reject":
		c.done(w, r, s, back, map[string]any{"RejectError": strings.Join(msgs, "; "), "Reason": f.Get("reason")})
	case code >= 400:
		c.done(w, r, s, back, map[string]any{"ApproveErrors": msgs, "Form": f})
	case res.Outcome == nil:
		c.done(w, r, s, back, map[string]any{"Flash": "Decision recorded; the review is still working on it. Reload this page to see its outcome."})
	default:
		c.done(w, r, s, back, nil)
	}
}

// policyFromForm reads the approve dialog; every field is checked here
// (and again by the server), errors name the field as the page labels it.
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

// signalBar is one score component of a search hit, as a bar.
type signalBar struct {
	Name  string
	Value float64
	Width float64 // 0..1 of the largest component on the page
}

type toolHit struct {
	ID, Name, Verb, Category, Description string
	Score                                 float64
	Bars                                  []signalBar
}

func (c *Console) tools(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	data := map[string]any{"Q": q.Get("q"), "Context": q.Get("context"), "Strategy": q.Get("strategy"), "Category": q.Get("category")}
	if strings.TrimSpace(q.Get("q")) != "" {
		if len(q.Get("q")) > 500 {
			data["Error"] = "The search text is too long (at most 500 characters)."
			c.page(w, r, s, http.StatusBadRequest, "tools", data)
			return
		}
		v := url.Values{"q": {q.Get("q")}, "maxTools": {"10"}, "includeExamples": {"false"}}
		for _, k := range []string{"context", "strategy", "category"} {
			if q.Get(k) != "" {
				v.Set(k, q.Get(k))
			}
		}
		var res struct {
			Tools []struct {
				Tool struct {
					ID               string `json:"toolId"`
					Name, Verb       string
					Category         string
					ShortDescription string `json:"shortDescription"`
				} `json:"tool"`
				Score     float64                               `json:"score"`
				Breakdown map[string]struct{ Weighted float64 } `json:"breakdown"`
			} `json:"ranked"`
		}
		code, msg := c.call(r.Context(), s.keyOrGuest(), http.MethodGet, "/api/v1/tools/retrieval/search?"+v.Encode(), nil, &res)
		if code >= 400 {
			data["Error"] = msg
			c.page(w, r, s, code, "tools", data)
			return
		}
		maxV := 1e-9
		for _, t := range res.Tools {
			for _, b := range t.Breakdown {
				maxV = math.Max(maxV, math.Abs(b.Weighted))
			}
		}
		var hits []toolHit
		for _, t := range res.Tools {
			h := toolHit{ID: t.Tool.ID, Name: t.Tool.Name, Verb: t.Tool.Verb, Category: t.Tool.Category, Description: t.Tool.ShortDescription, Score: t.Score}
			for name, b := range t.Breakdown {
				if b.Weighted != 0 {
					h.Bars = append(h.Bars, signalBar{Name: name, Value: b.Weighted, Width: math.Abs(b.Weighted) / maxV})
				}
			}
			sort.Slice(h.Bars, func(i, j int) bool { return math.Abs(h.Bars[i].Value) > math.Abs(h.Bars[j].Value) })
			hits = append(hits, h)
		}
		data["Hits"] = hits
		data["Searched"] = true
		c.page(w, r, s, http.StatusOK, "tools", data)
		return
	}
	c.browse(w, r, s, data)
}

// browseSize is how many tools a page of the catalogue shows.
const browseSize = 25

// browse pages through the catalogue the caller may see (no search text):
// filtered by category, status and module, most used first or by id.
func (c *Console) browse(w http.ResponseWriter, r *http.Request, s *session, data map[string]any) {
	q := r.URL.Query()
	sortBy := q.Get("sort")
	if sortBy == "" {
		sortBy = "uses"
	}
	v := url.Values{"limit": {strconv.Itoa(browseSize)}, "sort": {sortBy}}
	for _, k := range []string{"category", "status", "module", "cursor"} {
		if x := strings.TrimSpace(q.Get(k)); x != "" {
			v.Set(k, x)
		}
	}
	var page struct {
		Items []struct {
			ID               string `json:"toolId"`
			Name, Verb       string
			Category, Status string
			Module           string
			Tags             []string
			ShortDescription string `json:"shortDescription"`
			Uses             int    `json:"uses"`
		} `json:"items"`
		NextCursor string `json:"nextCursor"`
		Matched    int    `json:"matched"`
	}
	code, msg := c.call(r.Context(), s.keyOrGuest(), http.MethodGet, "/api/v1/tools?"+v.Encode(), nil, &page)
	data["Browse"] = true
	data["Sort"], data["Status"], data["Module"], data["Cursor"] = sortBy, q.Get("status"), q.Get("module"), q.Get("cursor")
	if code >= 400 {
		data["Error"] = msg
		c.page(w, r, s, code, "tools", data)
		return
	}
	data["Items"], data["Matched"] = page.Items, page.Matched
	data["First"], data["Next"] = pageLinks("/ui/tools", q, []string{"category", "status", "module", "sort"}, "cursor", page.NextCursor)
	c.page(w, r, s, http.StatusOK, "tools", data)
}

func (c *Console) tool(w http.ResponseWriter, r *http.Request, s *session, id string) {
	var t map[string]any
	code, msg := c.call(r.Context(), s.keyOrGuest(), http.MethodGet, "/api/v1/tools/"+url.PathEscape(id), nil, &t)
	if code >= 400 {
		next := "Search or browse the tools you may see."
		if s == nil {
			next = "Tools that need a key are hidden from guests: sign in, or search the public tools."
		}
		c.page(w, r, s, code, "error", map[string]any{"Title": "No such tool", "Message": msg, "Next": next, "Back": "/ui/tools", "BackLabel": "Tools"})
		return
	}
	var hist struct {
		Revisions []struct {
			Revision       int
			Status, Reason string
			At             time.Time
		} `json:"revisions"`
	}
	c.call(r.Context(), s.keyOrGuest(), http.MethodGet, "/api/v1/tools/"+url.PathEscape(id)+"/history", nil, &hist)
	var mv struct {
		Relationships map[string]any `json:"relationships"`
		Analytics     map[string]any `json:"analytics"`
	}
	c.call(r.Context(), s.keyOrGuest(), http.MethodGet, "/api/v1/tools/retrieval/manifest/"+url.PathEscape(id)+"?includeRelationships=true&includeAnalytics=true", nil, &mv)
	manifest, _ := json.MarshalIndent(t["manifest"], "", "  ")
	c.page(w, r, s, http.StatusOK, "tool", map[string]any{"ID": id, "Tool": t, "Manifest": string(manifest), "History": hist.Revisions,
		"Relationships": mv.Relationships, "Analytics": mv.Analytics})
}

func (c *Console) sources(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	var out struct {
		Sources []struct {
			ID, Type, Location, LastError string
			LastScannedAt                 time.Time
			Specs                         int
		} `json:"sources"`
	}
	code, msg := c.call(r.Context(), s.key, http.MethodGet, "/api/v1/tools/sources", nil, &out)
	c.page(w, r, s, okOr(code), "sources", map[string]any{"Sources": out.Sources, "Error": msg})
}

func (c *Console) sourceAction(w http.ResponseWriter, r *http.Request, s *session, action string) {
	if c.needSignIn(w, r, s) {
		return
	}
	const back = "/ui/sources"
	switch action {
	case "add":
		loc := strings.TrimSpace(r.PostFormValue("location"))
		if loc == "" || len(loc) > 2000 {
			c.done(w, r, s, back, map[string]any{"FormError": "Give the spec's URL, file or folder (1 to 2000 characters).", "Location": loc})
			return
		}
		var res addedSource
		code, msg := c.call(r.Context(), s.key, http.MethodPost, "/api/v1/tools/sources?wait=60s", map[string]any{"type": "openapi", "location": loc}, &res)
		if code >= 400 {
			c.done(w, r, s, back, map[string]any{"FormError": msg, "Location": loc})
			return
		}
		c.done(w, r, s, back, res.flash())
	case "scan":
		code, msg := c.call(r.Context(), s.key, http.MethodPost, "/api/v1/tools/sources/scan", nil, nil)
		if code >= 400 {
			c.done(w, r, s, back, map[string]any{"FormError": msg})
			return
		}
		c.done(w, r, s, back, map[string]any{"Flash": "A scan of every source has started."})
	case "remove":
		id := r.PostFormValue("id")
		code, msg := c.call(r.Context(), s.key, http.MethodDelete, "/api/v1/tools/sources/"+url.PathEscape(id), nil, nil)
		if code >= 400 {
			c.done(w, r, s, back, map[string]any{"FormError": msg})
			return
		}
		c.done(w, r, s, back, map[string]any{"Flash": "Source removed."})
	default:
		c.page(w, r, s, http.StatusNotFound, "error", map[string]any{"Message": "Unknown action " + action + ".", "Back": back, "BackLabel": "Sources"})
	}
}

// addedSource is what the console reads of POST /tools/sources's answer:
// the outcome of the source's first scan.
type addedSource struct {
	Scan *struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Report *struct {
			Specs    int               `json:"specs"`
			NewSpecs []json.RawMessage `json:"newSpecs"`
			Errors   []string          `json:"errors"`
			Error    string            `json:"error"`
		} `json:"report"`
	} `json:"scan"`
}

// flash says what adding the source did: a scan that failed, or found no
// spec, is an error on the page, never a green "scanned".
func (a addedSource) flash() map[string]any {
	failed := func(why string) map[string]any {
		return map[string]any{"ScanError": "Source added, but its scan failed: " + why}
	}
	sc := a.Scan
	switch {
	case sc == nil:
		return map[string]any{"Flash": "Source added; it was not scanned."}
	case sc.Status == "running":
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

func (c *Console) notifications(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	var out struct {
		Notifications []struct {
			Kind, Subject, Message string
			At                     time.Time
		} `json:"notifications"`
	}
	code, msg := c.call(r.Context(), s.key, http.MethodGet, "/api/v1/notifications", nil, &out)
	c.page(w, r, s, okOr(code), "notifications", map[string]any{"Items": out.Notifications, "Error": msg})
}

func (c *Console) enable(w http.ResponseWriter, r *http.Request, s *session, toolID string) {
	if c.needSignIn(w, r, s) {
		return
	}
	var out struct {
		Enabled []string `json:"enabled"`
	}
	code, msg := c.call(r.Context(), s.key, http.MethodPost, "/api/v1/tools/"+url.PathEscape(toolID)+"/enable", map[string]any{"reason": "re-enabled from the console"}, &out)
	if code >= 400 {
		c.done(w, r, s, "/ui/notifications", map[string]any{"FormError": msg})
		return
	}
	c.done(w, r, s, "/ui/notifications", map[string]any{"Flash": "Re-enabled: " + strings.Join(out.Enabled, ", ")})
}

func (c *Console) gaps(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	var rep struct {
		Fulfilments struct {
			Total    int
			ByBranch map[string]int `json:"byBranch"`
		} `json:"fulfilments"`
		RecentRuns []struct {
			WorkflowID string `json:"workflowId"`
			RunID      string `json:"runId"`
			Verb       string `json:"verb"`
			Branch     string `json:"branch"`
			Status     string `json:"status"`
			StartedAt  string `json:"startedAt"`
			DurationMs int64  `json:"durationMs"`
		} `json:"recentRuns"`
		RunsAvailable bool   `json:"runsAvailable"`
		RunsError     string `json:"runsError"`
	}
	code, msg := c.call(r.Context(), s.key, http.MethodGet, "/api/v1/tools/admin/analytics?top=50", nil, &rep)
	type run struct {
		Verb, Branch, Status, StartedAt, Link string
		DurationMs                            int64
	}
	runs := make([]run, 0, len(rep.RecentRuns))
	for _, x := range rep.RecentRuns {
		link := ""
		if c.ui != "" {
			link = fmt.Sprintf("%s/namespaces/%s/workflows/%s/%s/history", c.ui, url.PathEscape(c.ns), url.PathEscape(x.WorkflowID), url.PathEscape(x.RunID))
		}
		runs = append(runs, run{Verb: x.Verb, Branch: x.Branch, Status: x.Status, StartedAt: x.StartedAt, Link: link, DurationMs: x.DurationMs})
	}
	all := ""
	if c.ui != "" {
		all = c.ui + "/namespaces/" + url.PathEscape(c.ns) + "/workflows?query=" + url.QueryEscape(`WorkflowType="NovelVerbWorkflow"`)
	}
	var open struct {
		Gaps []struct {
			Verb, Description string
			Count             int
			LastSeen          string `json:"lastSeen"`
			Closest           []struct {
				ToolID string  `json:"toolId"`
				Score  float64 `json:"score"`
			} `json:"closest"`
		} `json:"gaps"`
	}
	gcode, gmsg := c.call(r.Context(), s.key, http.MethodGet, "/api/v1/gaps?status=open&limit=50", nil, &open)
	c.page(w, r, s, okOr(max(code, gcode)), "gaps", map[string]any{"Gaps": open.Gaps, "GapsError": gmsg, "Fulfilments": rep.Fulfilments, "Runs": runs,
		"RunsAvailable": rep.RunsAvailable, "RunsError": rep.RunsError, "Error": msg, "AllRuns": all})
}

// duration renders milliseconds for people.
func duration(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", ms)
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
}

// okOr is 200 for a successful call and the API's status otherwise.
func okOr(code int) int {
	if code >= 400 {
		return code
	}
	return http.StatusOK
}

// age says how long ago an RFC 3339 time was.
func age(s string) string {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return s
	}
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h", int(d.Hours()))
	}
	return fmt.Sprintf("%d days", int(d.Hours()/24))
}

// ---- keys and the audit log (admins; the API's rules decide) ----

// keyRow is one API key as the keys page lists it.
type keyRow struct {
	ID, Owner, Description, Level, CreatedBy string
	Roles, Groups                            []string
	CreatedAt, ExpiresAt, RevokedAt          time.Time
	// LastUse is the key's newest audited call (zero: none recorded).
	LastUse       time.Time
	LastUseAction string
	// MayRevoke is identity's level rule for the signed-in key (the API
	// applies it again when the form is sent).
	MayRevoke bool
}

// keysShownWithLastUse bounds the audit look-ups the keys page makes.
const keysShownWithLastUse = 100

func (c *Console) keys(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	var out struct {
		Keys []keyRow `json:"keys"`
	}
	code, msg := c.call(r.Context(), s.key, http.MethodGet, "/api/v1/admin/keys", nil, &out)
	if code >= 400 {
		c.page(w, r, s, code, "error", map[string]any{"Title": "Keys", "Message": msg, "Next": "Only admins manage keys; sign in with an admin key."})
		return
	}
	// Newest first; the last use is the newest audit record of the key.
	slices.Reverse(out.Keys)
	for i := range out.Keys {
		out.Keys[i].MayRevoke = out.Keys[i].RevokedAt.IsZero() && out.Keys[i].ID != s.who.KeyID && identity.MayManage(s.who, out.Keys[i].Level, "revoke") == nil
		if i >= keysShownWithLastUse {
			break
		}
		var page struct {
			Items []struct {
				At     time.Time `json:"at"`
				Action string    `json:"action"`
			} `json:"items"`
		}
		c.call(r.Context(), s.key, http.MethodGet, "/api/v1/admin/audit?limit=1&actor="+url.QueryEscape("key:"+out.Keys[i].ID), nil, &page)
		if len(page.Items) > 0 {
			out.Keys[i].LastUse, out.Keys[i].LastUseAction = page.Items[0].At, page.Items[0].Action
		}
	}
	c.page(w, r, s, http.StatusOK, "keys", map[string]any{"Keys": out.Keys, "Self": s.who.KeyID, "Levels": []string{"guest", "user", "admin", "owner"}})
}

func (c *Console) createKey(w http.ResponseWriter, r *http.Request, s *session) {
	if c.needSignIn(w, r, s) {
		return
	}
	const back = "/ui/keys"
	f := r.PostForm
	req := map[string]any{"owner": strings.TrimSpace(f.Get("owner")), "level": f.Get("level")}
	if d := strings.TrimSpace(f.Get("description")); d != "" {
		req["description"] = d
	}
	for _, k := range []string{"roles", "groups"} {
		if v := splitList(f.Get(k)); len(v) > 0 {
			req[k] = v
		}
	}
	if v := strings.TrimSpace(f.Get("expires")); v != "" {
		day, err := time.Parse("2006-01-02", v)
		if err != nil {
			c.done(w, r, s, back, map[string]any{"FormErrors": []string{fmt.Sprintf("Expires must be a date such as 2027-01-31, got %q", v)}, "Form": f})
			return
		}
		req["expiresAt"] = day.UTC()
	}
	var out struct {
		Key    keyRow `json:"key"`
		Secret string `json:"secret"`
	}
	code, msgs := c.callAll(r.Context(), s.key, http.MethodPost, "/api/v1/admin/keys", req, &out)
	if code >= 400 {
		c.done(w, r, s, back, map[string]any{"FormErrors": msgs, "Form": f})
		return
	}
	// The secret rides in the session's one-time flash: the GET after the
	// redirect shows it, a reload no longer does.
	c.done(w, r, s, back, map[string]any{"Created": out.Key, "Secret": out.Secret})
}

func (c *Console) revokeKey(w http.ResponseWriter, r *http.Request, s *session, id string) {
	if c.needSignIn(w, r, s) {
		return
	}
	const back = "/ui/keys"
	code, msg := c.call(r.Context(), s.key, http.MethodDelete, "/api/v1/admin/keys/"+url.PathEscape(id), nil, nil)
	if code >= 400 {
		c.done(w, r, s, back, map[string]any{"RevokeError": msg})
		return
	}
	c.done(w, r, s, back, map[string]any{"Flash": "Key " + id + " revoked: it stops working at once."})
}

// auditRow is one audit event with a link to its object.
type auditRow struct {
	ID, Actor, ActorName, Action, Tool, Outcome, Route, Detail string
	At                                                         time.Time
	Status                                                     int
	Link                                                       string
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
	v := url.Values{"limit": {"50"}}
	for _, k := range []string{"actor", "action", "tool", "before"} {
		if x := strings.TrimSpace(q.Get(k)); x != "" {
			v.Set(k, x)
		}
	}
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
		v.Set(k, t.UTC().Format(time.RFC3339))
	}
	var page struct {
		Items []auditRow `json:"items"`
		Next  string     `json:"next"`
	}
	code, msg := c.call(r.Context(), s.key, http.MethodGet, "/api/v1/admin/audit?"+v.Encode(), nil, &page)
	if code == http.StatusForbidden {
		c.page(w, r, s, code, "error", map[string]any{"Title": "Audit log", "Message": msg, "Next": "Only admins read the audit log; sign in with an admin key."})
		return
	}
	if code >= 400 {
		data["Error"] = msg
		c.page(w, r, s, code, "audit", data)
		return
	}
	for i := range page.Items {
		page.Items[i].Link = objectLink(page.Items[i].Route, page.Items[i].Tool)
	}
	data["Items"] = page.Items
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
