// Package web is the review console at /ui/: pages for
// approvers and operators, server-rendered with html/template and embedded
// in the binary (no script library, no CDN, no build step: every action is
// a plain HTML form, so it works with the keyboard and without JavaScript).
//
// The console is a thin edge over the same domain services the REST API
// calls (the review service, the registry, retrieval, keys, the audit log,
// analytics). Each page names the API route it stands for, and the API's
// authorization table (api.Rules, through a Gate) decides for the
// signed-in identity exactly as it does for that route: its rule, its rate
// limit and whether the action is audited. Visibility and validation are
// the services' own, so a page shows only what that identity may see.
// Sign-in takes an API key into a session kept in the store (only a hash
// of its token), behind an HttpOnly, SameSite=Strict cookie; every form
// carries the session's CSRF token.
package web

import (
	"bytes"
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/airlock/review"
	"github.com/toolsmith/toolsmith/analytics"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/audit"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/registry"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/retrain"
)

//go:embed templates/*.html static/*
var assets embed.FS

// maxForm bounds a form's body.
const maxForm = 64 << 10

// Gate is the API's authorization table applied to the console's calls
// (an *api.Gate, whose one decision the API's middleware also uses):
// route is the API route template a page stands for.
type Gate interface {
	Allow(ctx context.Context, method, route, tool string, p identity.Principal, addr string) error
	Record(ctx context.Context, method, route string, p identity.Principal, tool string, err error)
	RecordAuthFailure(ctx context.Context, method, route string, err error)
	// Permits is the route's rule alone for p (no rate limit taken, nothing
	// audited): what the menu offers.
	Permits(ctx context.Context, method, route string, p identity.Principal) error
}

// Notifications lists notifications, newest first.
type Notifications interface {
	List(ctx context.Context, limit int) ([]airlock.Notification, error)
}

// Enabler re-enables the tools of an onboarded API.
type Enabler interface {
	Enable(ctx context.Context, slug, reason string) ([]string, error)
}

// Deps are the domain services the console calls. Sessions, Auth, Keys,
// Gate, Registry, Retrieval and Store are required; a nil Reviews,
// Notes, Enabler or Models leaves its pages saying the part is not
// running in this process.
type Deps struct {
	// Sessions keeps the signed-in sessions (the store, shared by replicas).
	Sessions graph.Sessions
	Auth     *identity.Authenticator
	Keys     *identity.KeyService
	Gate     Gate
	Audit    *audit.Log
	Registry *registry.Service
	// Retrieval searches and reads manifests.
	Retrieval *retrieval.Service
	// Store holds the analytics' usage, series and gaps.
	Store graph.Store
	// Runs lists fulfilment runs for the analytics (nil: none).
	Runs    analytics.RunLister
	Models  *retrain.Service
	Reviews *review.Service
	Notes   Notifications
	Enabler Enabler
	Logger  *slog.Logger
	// Proxies are the reverse proxies whose X-Forwarded-For names the
	// client (a guest's rate limits); none by default.
	Proxies identity.Proxies
}

// Config configures the console.
type Config struct {
	// TemporalUI is the Temporal Web UI's base URL; runs link to it (none
	// when empty).
	TemporalUI string
	// Namespace is the Temporal namespace of the runs (default "default").
	Namespace string
}

// Console serves /ui/.
type Console struct {
	d     Deps
	tmpl  *template.Template
	mux   *http.ServeMux
	now   func() time.Time
	ui    string // the Temporal UI base URL, for run links
	ns    string // the runs' Temporal namespace
	files http.Handler
	log   *slog.Logger

	mu    sync.Mutex
	swept time.Time // when this process last swept expired sessions
	// signinKey is the store's sign-in secret, once read (signinSecret).
	signinKey []byte
}

// New returns the console over the domain services in d.
func New(d Deps, cfg Config) *Console {
	switch {
	case d.Sessions == nil, d.Gate == nil, d.Store == nil:
		panic("web: nil Sessions, Gate or Store")
	case d.Auth == nil, d.Keys == nil, d.Registry == nil, d.Retrieval == nil:
		panic("web: nil Auth, Keys, Registry or Retrieval")
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	t := template.Must(template.New("").Funcs(template.FuncMap{
		"pct":   func(v float64) string { return strconv.FormatFloat(math.Max(0, math.Min(100, v*100)), 'f', 0, 64) },
		"num":   func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) },
		"join":  strings.Join,
		"list":  func(xs ...string) []string { return xs },
		"since": age,
		"ms":    func(ms int64) string { return duration(ms) },
		"has":   func(xs []string, x string) bool { return slices.Contains(xs, x) },
	}).ParseFS(assets, "templates/*.html"))
	static, _ := fs.Sub(assets, "static")
	c := &Console{d: d, tmpl: t, now: time.Now, ui: strings.TrimRight(cfg.TemporalUI, "/"), ns: cfg.Namespace, log: d.Logger,
		files: http.StripPrefix("/ui/static/", http.FileServer(http.FS(static)))}
	c.routes()
	return c
}

// routes lays out the console's pages. Each handler reads the request's
// session (set by ServeHTTP) and checks what it calls through the Gate.
func (c *Console) routes() {
	m := http.NewServeMux()
	h := func(pattern string, fn func(http.ResponseWriter, *http.Request, *session)) {
		ids := pathIDs(pattern)
		m.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			s := sessionOf(r)
			if !c.checkPathIDs(w, r, s, ids) {
				return
			}
			fn(w, r, s)
		})
	}
	m.Handle("GET /ui/static/", c.files)
	m.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { // browsers ask the root for it
		http.Redirect(w, r, "/ui/static/favicon.svg", http.StatusMovedPermanently)
	})
	home := func(w http.ResponseWriter, r *http.Request, s *session) {
		http.Redirect(w, r, c.home(r.Context(), s), http.StatusSeeOther)
	}
	h("GET /ui", home)
	h("GET /ui/{$}", home)
	h("GET /ui/dashboard", c.dashboard)
	h("GET /ui/signin", func(w http.ResponseWriter, r *http.Request, _ *session) {
		c.signInPage(w, r, http.StatusOK, c.signInError(w, r))
	})
	h("POST /ui/signin", func(w http.ResponseWriter, r *http.Request, _ *session) { c.signIn(w, r) })
	h("POST /ui/signout", c.signOut)
	h("GET /ui/reviews", c.reviews)
	h("GET /ui/reviews/{id}", c.review)
	h("POST /ui/reviews/{id}/approve", c.approve)
	h("POST /ui/reviews/{id}/reject", c.reject)
	h("GET /ui/decided", c.decided)
	h("GET /ui/tools", c.tools)
	h("GET /ui/tools/{id}", c.tool)
	h("POST /ui/tools/{id}/enable", c.enable)
	h("GET /ui/sources", c.sources)
	h("POST /ui/sources/add", c.addSource)
	h("POST /ui/sources/scan", c.scanSources)
	h("POST /ui/sources/remove", c.removeSource)
	h("GET /ui/notifications", c.notifications)
	h("GET /ui/gaps", c.gaps)
	h("GET /ui/keys", c.keys)
	h("POST /ui/keys/create", c.createKey)
	h("POST /ui/keys/{id}/revoke", c.revokeKey)
	h("GET /ui/audit", c.auditLog)
	h("/", func(w http.ResponseWriter, r *http.Request, s *session) {
		c.page(w, r, s, http.StatusNotFound, "error", map[string]any{"Title": "Page not found", "Message": "There is no page " + fault.Echo(r.URL.Path) + ".",
			"Next": "Use the sections above, or start from the console's first page."})
	})
	c.mux = m
}

// pathIDs are the names of a route pattern's path wildcards ("{id}").
func pathIDs(pattern string) []string {
	var names []string
	for rest := pattern; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return names
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return names
		}
		if name := strings.TrimSuffix(rest[i+1:i+j], "..."); name != "$" {
			names = append(names, name)
		}
		rest = rest[i+j+1:]
	}
}

// checkPathIDs checks each of the request's path ids as the API checks
// its routes' (httpx.CheckID): an id that is not printable ASCII (NUL,
// invalid UTF-8), or is too long, is the caller's mistake, answered with
// a 400 page naming it before any service is called. It would otherwise
// reach Temporal or the store and come back as a 5xx logged as an error.
// It writes the page and returns false when one fails.
func (c *Console) checkPathIDs(w http.ResponseWriter, r *http.Request, s *session, names []string) bool {
	for _, name := range names {
		if err := httpx.CheckID(name, r.PathValue(name)); err != nil {
			_, msg := c.problem(r, err)
			c.page(w, r, s, http.StatusBadRequest, "error", map[string]any{"Title": "Malformed address", "Message": msg,
				"Next": "Follow a link from the console's pages rather than typing the address."})
			return false
		}
	}
	return true
}

// ServeHTTP sets the console's security headers, reads the session, checks
// every form's CSRF token, and routes the request.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "same-origin")
	if strings.HasPrefix(r.URL.Path, "/ui/static/") || r.URL.Path == "/favicon.ico" {
		c.mux.ServeHTTP(w, r)
		return
	}
	s, err := c.session(w, r)
	if err != nil {
		c.page(w, r, nil, http.StatusServiceUnavailable, "error", map[string]any{"Title": "Sessions unavailable",
			"Message": "The console could not read your session: " + err.Error(), "Next": "Try again in a moment."})
		return
	}
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil {
			c.page(w, r, s, http.StatusBadRequest, "error", map[string]any{"Message": "The form could not be read: " + err.Error()})
			return
		}
		want := ""
		switch {
		case r.URL.Path == "/ui/signin":
			// Before a session exists the token is the server's (signed,
			// at most an hour old), echoed by the cookie and the form, and
			// the form must come from the console's own pages.
			ck, err := r.Cookie(signinCookie)
			if err != nil || c.crossOrigin(r) {
				break
			}
			if err := c.verifySigninToken(r.Context(), ck.Value); err != nil {
				msg := "This sign-in form's security token was not issued by this server, or is older than an hour. Reload the sign-in page and try again."
				if !errors.Is(err, errSigninToken) {
					msg = "The console could not check the sign-in form: " + err.Error()
				}
				c.page(w, r, nil, http.StatusForbidden, "error", map[string]any{"Message": msg})
				return
			}
			want = ck.Value
		case s != nil:
			want = s.csrf
		}
		if want == "" || subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(want)) != 1 {
			c.page(w, r, s, http.StatusForbidden, "error", map[string]any{"Message": "This form has expired (its security token does not match your session). Reload the page and try again."})
			return
		}
	}
	c.mux.ServeHTTP(w, r.WithContext(withSession(r.Context(), s)))
}

// ---- calling the services ----

// who is the identity a page acts as: the session's, or the guest.
func (s *session) principal() identity.Principal {
	if s == nil {
		return identity.Anonymous()
	}
	return s.who
}

// allow checks, through the Gate, that the page's identity may call the
// API route (method and template) the page stands for.
func (c *Console) allow(r *http.Request, s *session, method, route string) error {
	return c.allowOn(r, s, method, route, "")
}

// allowOn is allow for a call about tool (a review, key, source or tool
// id), which a refusal's audit record names.
func (c *Console) allowOn(r *http.Request, s *session, method, route, tool string) error {
	return c.d.Gate.Allow(r.Context(), method, route, tool, s.principal(), c.d.Proxies.ClientAddr(r))
}

// record audits a call the route's row audits (err nil: it succeeded).
func (c *Console) record(r *http.Request, s *session, method, route, tool string, err error) {
	c.d.Gate.Record(r.Context(), method, route, s.principal(), tool, err)
}

// problems says what went wrong with a call as the API would: the status
// its error maps to, and its messages (one for each field the error
// names, each once, or its one message). An internal error is logged and
// said without its details.
func (c *Console) problems(r *http.Request, err error) (int, []string) {
	status, _ := httpx.Status(err)
	if status == http.StatusInternalServerError {
		c.log.ErrorContext(r.Context(), "console: internal error", "path", r.URL.Path, "err", err)
		return status, []string{"internal error; see the server log"}
	}
	fields := fault.Fields(err)
	if len(fields) == 0 {
		return status, []string{err.Error()}
	}
	var msgs []string
	for _, f := range fields {
		if m := f.Path + ": " + f.Message; !slices.Contains(msgs, m) {
			msgs = append(msgs, m)
		}
	}
	return status, msgs
}

// problem is problems with the messages joined.
func (c *Console) problem(r *http.Request, err error) (int, string) {
	code, msgs := c.problems(r, err)
	return code, strings.Join(msgs, "; ")
}

// errorText is an error's message for a page ("" for none).
func (c *Console) errorText(r *http.Request, err error) string {
	if err == nil {
		return ""
	}
	_, msg := c.problem(r, err)
	return msg
}

// notRunning is the error of a part this process does not run.
func notRunning(part string) error {
	return fmt.Errorf("%s is not running in this process: %w", part, fault.ErrUnavailable)
}

// page renders a page inside the layout.
func (c *Console) page(w http.ResponseWriter, r *http.Request, s *session, code int, name string, data map[string]any) {
	if data == nil {
		data = map[string]any{}
	}
	data["Page"] = name
	data["Session"] = s
	data["Menu"] = c.nav(r.Context(), s, name)
	if s != nil && r.Method == http.MethodGet && len(s.flash) > 0 {
		for k, v := range c.takeFlash(r, s) {
			data[k] = v
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
// the errors and the form to refill) in the session for the page at to,
// and redirects there with 303, so a reload shows the page again and sends
// nothing. The session keeps it in the store, sealed, so the GET may be
// served by any replica.
func (c *Console) done(w http.ResponseWriter, r *http.Request, s *session, to string, data map[string]any) {
	if s != nil && len(data) > 0 {
		path := to
		if i := strings.IndexByte(path, '?'); i >= 0 {
			path = path[:i]
		}
		if err := c.putFlash(r, s, path, data); err != nil {
			_, msg := c.problem(r, err)
			c.page(w, r, s, http.StatusServiceUnavailable, "error", map[string]any{"Title": "Result not kept",
				"Message": "The action ran, but its result could not be kept for the next page: " + msg, "Back": to, "BackLabel": "Back"})
			return
		}
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

// okOr is 200 without an error and the error's status otherwise.
func okOr(code int) int {
	if code >= 400 {
		return code
	}
	return http.StatusOK
}

// age says how long ago a time was: a time.Time or an RFC 3339 string.
func age(v any) string {
	var t time.Time
	switch x := v.(type) {
	case time.Time:
		t = x
	case string:
		var err error
		if t, err = time.Parse(time.RFC3339, x); err != nil {
			return x
		}
	default:
		return fmt.Sprint(v)
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
