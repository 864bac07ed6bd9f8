package web

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/airlock/review"
	"github.com/toolsmith/toolsmith/api"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/audit"
	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/registry"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/retrain"
	"github.com/toolsmith/toolsmith/workflows"
)

// fakeTemporal stands in for the Temporal client under the review service:
// reviews by id, a scan's outcome, and every call it was asked.
type fakeTemporal struct {
	mu     sync.Mutex
	calls  []string
	states map[string]workflows.AirlockState
	// scan is what a scan run returns; scanErr fails it instead.
	scan    *workflows.ScanOutput
	scanErr error
}

func (f *fakeTemporal) call(c string) {
	f.mu.Lock()
	f.calls = append(f.calls, c)
	f.mu.Unlock()
}

func (f *fakeTemporal) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

type jsonValue struct{ v any }

func (j jsonValue) HasValue() bool { return j.v != nil }
func (j jsonValue) Get(ptr any) error {
	b, _ := json.Marshal(j.v)
	return json.Unmarshal(b, ptr)
}

type fakeRun struct {
	id  string
	f   *fakeTemporal
	out *workflows.ScanOutput
	err error
}

func (r fakeRun) GetID() string                  { return r.id }
func (r fakeRun) GetRunID() string               { return "run-" + r.id }
func (r fakeRun) GetFirstExecutionRunID() string { return "run-" + r.id }
func (r fakeRun) Get(ctx context.Context, ptr any) error {
	if r.err != nil {
		return r.err
	}
	if out, ok := ptr.(*workflows.ScanOutput); ok && r.out != nil {
		*out = *r.out
		return nil
	}
	if out, ok := ptr.(*workflows.AirlockOutcome); ok && r.f != nil { // a decided review ends at once
		*out = workflows.AirlockOutcome{Status: "decided"}
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}
func (r fakeRun) GetWithOptions(ctx context.Context, ptr any, _ client.WorkflowRunGetOptions) error {
	return r.Get(ctx, ptr)
}

func (f *fakeTemporal) ExecuteWorkflow(_ context.Context, opts client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
	f.call("start " + opts.ID)
	return fakeRun{id: opts.ID, out: f.scan, err: f.scanErr}, nil
}

type fakeUpdate struct{}

func (fakeUpdate) WorkflowID() string             { return "" }
func (fakeUpdate) RunID() string                  { return "" }
func (fakeUpdate) UpdateID() string               { return "" }
func (fakeUpdate) Get(context.Context, any) error { return nil }

func (f *fakeTemporal) UpdateWorkflow(_ context.Context, opts client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	d := opts.Args[0].(workflows.Decision)
	who := ""
	if d.Approve != nil {
		who = "approve by " + d.Approve.Reviewer
	} else {
		who = "reject by " + d.Reject.Reviewer
	}
	f.call("decide " + opts.WorkflowID + ": " + who)
	return fakeUpdate{}, nil
}

func (f *fakeTemporal) QueryWorkflow(_ context.Context, id, _, _ string, _ ...any) (converter.EncodedValue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.states[id]
	if !ok {
		return nil, serviceerror.NewNotFound("workflow not found")
	}
	return jsonValue{st}, nil
}

func (f *fakeTemporal) ListWorkflow(context.Context, *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &workflowservice.ListWorkflowExecutionsResponse{}
	for id := range f.states {
		out.Executions = append(out.Executions, &workflowpb.WorkflowExecutionInfo{Execution: &commonpb.WorkflowExecution{WorkflowId: id}})
	}
	return out, nil
}

func (f *fakeTemporal) GetWorkflow(_ context.Context, id, _ string) client.WorkflowRun {
	return fakeRun{id: id, f: f}
}

// env is a console's world: a SQLite store on disk (its sessions
// included), keys, the audit log, the registry and search over a hashing
// embedder, and the review service over a fake Temporal.
type env struct {
	t      *testing.T
	path   string
	st     *sqlite.Store
	keys   *identity.KeyService
	log    *audit.Log
	tc     *fakeTemporal
	admin  string // an admin's key
	user   string // a user's key
	emb    *hashing.Embedder
	userID string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, path: filepath.Join(t.TempDir(), "g.db"), tc: &fakeTemporal{states: map[string]workflows.AirlockState{}}, emb: hashing.New(16)}
	e.open()
	ctx := context.Background()
	if err := e.st.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: e.emb.Name(), Dimension: e.emb.Dimension()}); err != nil {
		t.Fatal(err)
	}
	_, admin, err := e.keys.Create(ctx, identity.Principal{}, identity.NewKey{Owner: "ana", Level: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	k, user, err := e.keys.Create(ctx, identity.Principal{}, identity.NewKey{Owner: "bo", Level: "user"})
	if err != nil {
		t.Fatal(err)
	}
	e.admin, e.user, e.userID = admin, user, k.ID
	return e
}

// open (re)opens the store file, as a process starting does.
func (e *env) open() {
	e.t.Helper()
	st, err := sqlite.Open(e.path, sqlite.Options{})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { st.Close() })
	e.st, e.keys, e.log = st, identity.NewKeyService(st), audit.New(st)
	e.keys.SetCacheTTL(0)
}

// console is one console process over the env's store.
func (e *env) console() *Console {
	search := retrieval.New(e.st, e.emb, retrieval.Options{})
	models, err := retrain.New(e.st, e.emb, search, retrieval.Options{})
	if err != nil {
		e.t.Fatal(err)
	}
	return New(Deps{Sessions: e.st, Auth: &identity.Authenticator{Keys: e.keys}, Keys: e.keys, Gate: api.NewGate(nil, e.log, nil), Audit: e.log,
		Registry: registry.New(e.st, e.emb), Retrieval: search, Store: e.st, Models: models, Reviews: review.New(e.tc, e.st, review.Config{})},
		Config{TemporalUI: "http://ui.invalid"})
}

// browser keeps cookies across requests to a console.
type browser struct {
	t       *testing.T
	c       *Console
	cookies map[string]*http.Cookie
}

func (b *browser) do(method, path string, form url.Values) *httptest.ResponseRecorder {
	b.t.Helper()
	var req *http.Request
	if form != nil {
		req = httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req = httptest.NewRequest(method, path, nil)
	}
	for _, ck := range b.cookies {
		req.AddCookie(ck)
	}
	w := httptest.NewRecorder()
	b.c.ServeHTTP(w, req)
	for _, ck := range w.Result().Cookies() {
		if ck.MaxAge < 0 {
			delete(b.cookies, ck.Name)
		} else {
			b.cookies[ck.Name] = ck
		}
	}
	return w
}

// submit posts a form and follows the console's redirect (post/redirect/
// get), failing when the POST answers anything but 303.
func (b *browser) submit(path string, form url.Values) *httptest.ResponseRecorder {
	b.t.Helper()
	w := b.do("POST", path, form)
	if w.Code != http.StatusSeeOther {
		b.t.Fatalf("POST %s: %d, want 303 (post/redirect/get)\n%s", path, w.Code, w.Body)
	}
	return b.do("GET", w.Header().Get("Location"), nil)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func token(t *testing.T, body string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no csrf field in the page:\n%s", body)
	}
	return m[1]
}

func (e *env) browser(c *Console) *browser {
	return &browser{t: e.t, c: c, cookies: map[string]*http.Cookie{}}
}

func newBrowser(t *testing.T) (*browser, *env) {
	e := newEnv(t)
	return e.browser(e.console()), e
}

func (b *browser) signIn(key string) *httptest.ResponseRecorder {
	b.t.Helper()
	page := b.do("GET", "/ui/signin", nil)
	return b.do("POST", "/ui/signin", url.Values{"key": {key}, "csrf": {token(b.t, page.Body.String())}})
}

// formToken is the CSRF token of the page at path.
func (b *browser) formToken(path string) string {
	b.t.Helper()
	return token(b.t, b.do("GET", path, nil).Body.String())
}

func TestSignInSetsAStrictHttpOnlySessionCookie(t *testing.T) {
	b, e := newBrowser(t)
	w := b.signIn(e.admin)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/ui/dashboard" { // an admin's first page
		t.Fatalf("sign in: %d %s", w.Code, w.Body)
	}
	ck := b.cookies[CookieName]
	if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Value == "" || strings.Contains(ck.Value, e.admin) {
		t.Fatalf("session cookie: %+v", ck)
	}
	if page := b.do("GET", "/ui/sources", nil); page.Code != http.StatusOK || !strings.Contains(page.Body.String(), "ana") {
		t.Fatalf("signed-in page: %d %s", page.Code, page.Body)
	}
	// The store keeps a hash of the token, never the token or the key.
	if _, err := e.st.GetSession(context.Background(), ck.Value); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("the raw token finds a session: %v", err)
	}
	rec, err := e.st.GetSession(context.Background(), sessionID(ck.Value))
	if err != nil || strings.Contains(string(rec.Principal), e.admin) {
		t.Fatalf("stored session: %+v %v", rec, err)
	}
	// Signing out ends the session on the server, not only in the browser.
	stolen := *ck
	if w := b.do("POST", "/ui/signout", url.Values{"csrf": {b.formToken("/ui/sources")}}); w.Code != http.StatusSeeOther {
		t.Fatalf("sign out: %d", w.Code)
	}
	b.cookies[CookieName] = &stolen
	if w := b.do("GET", "/ui/sources", nil); w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/ui/signin" {
		t.Fatalf("after sign-out the old cookie still works: %d", w.Code)
	}
}

// Sessions live in the store: a session opened by one console is accepted
// by another with its own handle on the same database (another replica),
// survives a restart, and signing out on one ends it on the other.
func TestSessionsAreSharedThroughTheStore(t *testing.T) {
	e := newEnv(t)
	one := e.browser(e.console())
	e.open() // the other replica: its own handle on the same database file
	two := e.browser(e.console())
	if w := one.signIn(e.admin); w.Code != http.StatusSeeOther {
		t.Fatalf("sign in: %d", w.Code)
	}
	two.cookies = one.cookies // the same browser, its next request served by the other replica
	page := two.do("GET", "/ui/sources", nil)
	if page.Code != http.StatusOK || !strings.Contains(page.Body.String(), "ana") {
		t.Fatalf("the other replica refuses the session: %d", page.Code)
	}
	// The CSRF token is the same on either replica: a form from one posts to the other.
	if a, b := one.formToken("/ui/sources"), two.formToken("/ui/sources"); a != b {
		t.Fatalf("CSRF tokens differ across replicas: %q %q", a, b)
	}
	// What a POST leaves for the next page is in the store, sealed: the
	// GET after the redirect may be served by the other replica. A new
	// key's secret never reaches the store in the clear.
	w := one.do("POST", "/ui/keys/create", url.Values{"csrf": {one.formToken("/ui/keys")}, "owner": {"cyrano-plainly-visible"}, "level": {"user"}})
	if w.Code != http.StatusSeeOther {
		t.Fatalf("create a key: %d\n%s", w.Code, w.Body)
	}
	rec, err := e.st.GetSession(context.Background(), sessionID(one.cookies[CookieName].Value))
	if err != nil || len(rec.Flash) == 0 || strings.Contains(string(rec.Flash), "tsk_") || strings.Contains(string(rec.Flash), "cyrano-plainly-visible") {
		t.Fatalf("the stored flash: %q %v", rec.Flash, err)
	}
	shown := two.do("GET", w.Header().Get("Location"), nil).Body.String()
	if secret := regexp.MustCompile(`tsk_[A-Za-z0-9_-]+`).FindString(shown); secret == "" {
		t.Fatalf("the other replica does not show the new key's secret:\n%s", shown)
	} else if again := one.do("GET", "/ui/keys", nil).Body.String(); strings.Contains(again, secret) {
		t.Fatal("the secret is shown again on the first replica")
	}
	// A restart: a new process opens the store file again.
	e.open()
	restarted := e.browser(e.console())
	restarted.cookies = one.cookies
	if w := restarted.do("GET", "/ui/sources", nil); w.Code != http.StatusOK {
		t.Fatalf("after a restart the session is gone: %d", w.Code)
	}
	stolen := *one.cookies[CookieName]
	if w := one.do("POST", "/ui/signout", url.Values{"csrf": {one.formToken("/ui/sources")}}); w.Code != http.StatusSeeOther {
		t.Fatalf("sign out: %d", w.Code)
	}
	for name, b := range map[string]*browser{"other replica": two, "restarted": restarted} {
		b.cookies = map[string]*http.Cookie{CookieName: &stolen}
		if w := b.do("GET", "/ui/sources", nil); w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/ui/signin" {
			t.Fatalf("%s: a session signed out elsewhere still works: %d", name, w.Code)
		}
	}
}

// A session ends when it is not used for SessionTTL, is kept alive by use
// (a sliding expiry), ends with its key's revocation, and expired ones are
// swept from the store.
func TestSessionExpiryAndRevocation(t *testing.T) {
	e := newEnv(t)
	c := e.console()
	now := time.Now()
	c.now = func() time.Time { return now }
	b := e.browser(c)
	b.signIn(e.user)
	now = now.Add(SessionTTL - time.Minute)
	if w := b.do("GET", "/ui/reviews", nil); w.Code == http.StatusSeeOther {
		t.Fatal("a used session expired early")
	}
	now = now.Add(SessionTTL - time.Minute) // past the first expiry, within the slid one
	if w := b.do("GET", "/ui/reviews", nil); w.Code == http.StatusSeeOther {
		t.Fatal("use did not slide the expiry")
	}
	now = now.Add(SessionTTL + time.Second)
	if w := b.do("GET", "/ui/reviews", nil); w.Code != http.StatusSeeOther {
		t.Fatalf("an unused session outlived its TTL: %d", w.Code)
	}
	// Revoking the key ends its sessions.
	b2 := e.browser(c)
	b2.signIn(e.user)
	if err := e.keys.Revoke(context.Background(), identity.Principal{}, e.userID); err != nil {
		t.Fatal(err)
	}
	if w := b2.do("GET", "/ui/reviews", nil); w.Code != http.StatusSeeOther {
		t.Fatalf("a revoked key's session still works: %d", w.Code)
	}
	// Expired sessions are swept at a sign-in (at most every sweepEvery).
	now = now.Add(sweepEvery)
	old := graph.ConsoleSession{ID: sessionID("old"), Principal: json.RawMessage(`{}`), ExpiresAt: now.Add(-time.Hour)}
	if err := e.st.PutSession(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	b.signIn(e.admin)
	if _, err := e.st.GetSession(context.Background(), old.ID); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("an expired session was not swept: %v", err)
	}
}

// tokens verifies one bearer token (an OIDC sign-in).
type tokens struct{}

func (tokens) Verify(_ context.Context, token string) (identity.Principal, error) {
	return identity.Principal{Subject: "oidc:cy", Name: "cy", Method: identity.MethodOIDC, Level: "user"}, nil
}

// A bearer token's session ends with the token: its expiry does not slide
// past the token's exp claim.
func TestTokenSessionEndsWithTheToken(t *testing.T) {
	e := newEnv(t)
	c := e.console()
	c.d.Auth = &identity.Authenticator{Keys: e.keys, Tokens: tokens{}}
	now := time.Now()
	c.now = func() time.Time { return now }
	payload := base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(`{"sub":"cy","exp":%d}`, now.Add(time.Hour).Unix())))
	b := e.browser(c)
	if w := b.signIn("eyJhbGciOiJSUzI1NiJ9." + payload + ".c2ln"); w.Code != http.StatusSeeOther || b.cookies[CookieName] == nil {
		t.Fatalf("token sign-in: %d", w.Code)
	}
	now = now.Add(50 * time.Minute)
	if w := b.do("GET", "/ui/reviews", nil); w.Code == http.StatusSeeOther {
		t.Fatal("the session ended before the token")
	}
	now = now.Add(11 * time.Minute)
	if w := b.do("GET", "/ui/reviews", nil); w.Code != http.StatusSeeOther {
		t.Fatalf("the session outlived its token: %d", w.Code)
	}
}

func TestSignInRefusals(t *testing.T) {
	b, e := newBrowser(t)
	for name, key := range map[string]string{"empty": "", "too long": strings.Repeat("k", 201), "unknown": "tsk_nope"} {
		w := b.signIn(key)
		if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/ui/signin" || b.cookies[CookieName] != nil {
			t.Fatalf("%s key: %d %s", name, w.Code, w.Body)
		}
		// The refusal is said once, on the GET it redirected to.
		page := b.do("GET", "/ui/signin", nil).Body.String()
		if !strings.Contains(page, `class="error"`) {
			t.Fatalf("%s key: the sign-in page does not say why:\n%s", name, page)
		}
		if again := b.do("GET", "/ui/signin", nil).Body.String(); strings.Contains(again, `class="error"`) {
			t.Fatalf("%s key: the refusal is shown again on a reload", name)
		}
	}
	// A refused key is audited as the API audits one.
	page, err := e.log.Query(context.Background(), graph.AuditQuery{Action: "auth.failed"})
	if err != nil || len(page.Items) != 1 || page.Items[0].Route != "GET /api/v1/whoami" {
		t.Fatalf("refused sign-ins audited: %+v %v", page.Items, err)
	}
	// Without the sign-in form's token (a cross-site login) no session opens.
	w := b.do("POST", "/ui/signin", url.Values{"key": {e.admin}, "csrf": {"forged"}})
	if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "expired") || b.cookies[CookieName] != nil {
		t.Fatalf("forged sign-in: %d", w.Code)
	}
}

func TestEveryFormNeedsTheSessionToken(t *testing.T) {
	b, e := newBrowser(t)
	b.signIn(e.admin)
	e.tc.states["airlock-x"] = workflows.AirlockState{Status: workflows.AirlockPending}
	for _, path := range []string{"/ui/sources/add", "/ui/sources/scan", "/ui/reviews/airlock-x/approve", "/ui/reviews/airlock-x/reject",
		"/ui/tools/pets.list/enable", "/ui/keys/create", "/ui/keys/" + e.userID + "/revoke", "/ui/signout"} {
		for _, csrf := range []string{"", "stale"} {
			w := b.do("POST", path, url.Values{"csrf": {csrf}, "location": {"https://example.com/spec.yaml"}, "reason": {"no"}, "owner": {"x"}, "level": {"user"}})
			if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "expired") {
				t.Fatalf("POST %s with token %q: %d", path, csrf, w.Code)
			}
		}
	}
	srcs, _ := e.st.Sources(context.Background())
	keys, _ := e.keys.List(context.Background())
	if calls := e.tc.called(); len(calls) != 0 || len(srcs) != 0 || len(keys) != 2 || !keys[1].RevokedAt.IsZero() {
		t.Fatalf("forms without the token did something: %v %v %d keys", calls, srcs, len(keys))
	}
	// An oversized form is refused before it is read.
	w := b.do("POST", "/ui/sources/add", url.Values{"csrf": {b.formToken("/ui/sources")}, "location": {strings.Repeat("x", maxForm)}})
	if w.Code != http.StatusBadRequest {
		t.Fatalf("oversized form: %d", w.Code)
	}
}

func TestSourceFormRefusesEmptyAndLongLocations(t *testing.T) {
	b, e := newBrowser(t)
	b.signIn(e.admin)
	for _, loc := range []string{"", "   ", strings.Repeat("x", 2001)} {
		w := b.submit("/ui/sources/add", url.Values{"csrf": {b.formToken("/ui/sources")}, "location": {loc}})
		if srcs, _ := e.st.Sources(context.Background()); !strings.Contains(w.Body.String(), "URL, file or folder") || len(srcs) != 0 {
			t.Fatalf("location %.10q: %d %v", loc, w.Code, srcs)
		}
	}
}

func TestPolicyFromForm(t *testing.T) {
	ok, errs := policyFromForm(url.Values{"rateLimitPerMinute": {"60"}, "quotaPerDay": {" 100 "}, "costPerCall": {"0.05"},
		"allowedRoles": {"vet, nurse"}, "baseUrl": {"https://pets.example.com/v1"}, "operations": {"list_pets"}, "operationsShown": {"1"}})
	if len(errs) != 0 || ok["quotaPerDay"] != 100 || ok["costPerCall"] != 0.05 || len(ok["allowedRoles"].([]string)) != 2 || ok["baseUrl"] == nil {
		t.Fatalf("good policy: %v %v", ok, errs)
	}
	if p, err := policyOf(ok); err != nil || p.QuotaPerDay != 100 || p.CostPerCall != 0.05 || len(p.Operations) != 1 {
		t.Fatalf("policy read from the form: %+v %v", p, err)
	}
	cases := map[string]struct {
		form url.Values
		want string
	}{
		"quota word":      {url.Values{"quotaPerDay": {"lots"}}, "Quota per day"},
		"negative rate":   {url.Values{"rateLimitPerMinute": {"-1"}}, "Rate limit per minute"},
		"cost NaN":        {url.Values{"costPerCall": {"NaN"}}, "Cost per call"},
		"hard budget":     {url.Values{"hardBudget": {"1e999"}}, "Hard budget"},
		"base URL":        {url.Values{"baseUrl": {"ftp://x"}}, "Base URL"},
		"long role":       {url.Values{"allowedRoles": {strings.Repeat("r", 101)}}, "Allowed roles"},
		"no operations":   {url.Values{"operationsShown": {"1"}}, "Operations to onboard"},
		"two bad at once": {url.Values{"quotaPerDay": {"x"}, "softBudget": {"y"}}, "Soft budget"},
	}
	for name, c := range cases {
		_, errs := policyFromForm(c.form)
		if len(errs) == 0 || !strings.Contains(strings.Join(errs, "\n"), c.want) {
			t.Errorf("%s: %v", name, errs)
		}
	}
}

func TestPagesNeedSignInExceptToolsAndStatic(t *testing.T) {
	b, _ := newBrowser(t)
	for _, p := range []string{"/ui/reviews", "/ui/reviews/airlock-x", "/ui/sources", "/ui/notifications", "/ui/gaps", "/ui/keys", "/ui/audit", "/ui/dashboard"} {
		if w := b.do("GET", p, nil); w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/ui/signin" {
			t.Errorf("GET %s signed out: %d", p, w.Code)
		}
	}
	if w := b.do("GET", "/ui/tools", nil); w.Code != http.StatusOK {
		t.Errorf("GET /ui/tools signed out: %d", w.Code)
	}
	w := b.do("GET", "/ui/static/console.css", nil)
	if w.Code != http.StatusOK || !strings.Contains(w.Header().Get("Content-Type"), "css") {
		t.Fatalf("static: %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Fatalf("CSP: %q", csp)
	}
}

// The pages apply the API's authorization table for the signed-in key:
// a user (no approver role) sees the rule's refusal, not the reviews, and
// sends no decision; an admin's decision is audited as the API route's.
func TestPagesFollowTheAuthorizationTable(t *testing.T) {
	e := newEnv(t)
	c := e.console()
	e.tc.states["airlock-x"] = workflows.AirlockState{Status: workflows.AirlockPending, Review: workflows.SpecReview{Title: "Pets", Slug: "pets"}}
	user := e.browser(c)
	user.signIn(e.user)
	if w := user.do("GET", "/ui/reviews/airlock-x", nil); w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "approver") {
		t.Fatalf("a user reads a review: %d\n%s", w.Code, w.Body)
	}
	if w := user.do("GET", "/ui/keys", nil); w.Code != http.StatusForbidden {
		t.Fatalf("a user lists keys: %d", w.Code)
	}
	got := user.submit("/ui/reviews/airlock-x/reject", url.Values{"csrf": {user.formToken("/ui/tools")}, "reason": {"no"}}).Body.String()
	if len(e.tc.called()) != 0 || !strings.Contains(got, "approver") {
		t.Fatalf("a user's rejection was sent: %v\n%s", e.tc.called(), got)
	}
	admin := e.browser(c)
	admin.signIn(e.admin)
	admin.submit("/ui/reviews/airlock-x/reject", url.Values{"csrf": {admin.formToken("/ui/reviews/airlock-x")}, "reason": {"not ours"}})
	if calls := e.tc.called(); len(calls) != 1 || !strings.Contains(calls[0], "reject by") || !strings.Contains(calls[0], "(ana)") {
		t.Fatalf("the admin's rejection: %v", calls)
	}
	page, err := e.log.Query(context.Background(), graph.AuditQuery{Tool: "airlock-x"})
	if err != nil || len(page.Items) != 2 {
		t.Fatalf("audited decisions: %+v %v", page.Items, err)
	}
	for _, ev := range page.Items { // newest first: the admin's, then the user's refusal
		if ev.Route != "POST /api/v1/tools/pending/:id/reject" || ev.Action != audit.Action("POST", "/api/v1/tools/pending/:id/reject") {
			t.Fatalf("audit record: %+v", ev)
		}
	}
	if page.Items[0].Outcome != graph.AuditSuccess || page.Items[1].Outcome != graph.AuditDenied {
		t.Fatalf("outcomes: %s, %s", page.Items[0].Outcome, page.Items[1].Outcome)
	}
}

// "Add and scan" reports what the first scan found: a location that cannot
// be read or that holds no spec is an error on the page, not a green
// "scanned".
func TestAddSourceReportsAFailedScan(t *testing.T) {
	for _, c := range []struct {
		name    string
		scan    *workflows.ScanOutput
		scanErr error
		want    string
		ok      bool
	}{
		{"unreadable", &workflows.ScanOutput{Reports: []workflows.ScanReport{{SourceID: "src-1", Error: "airlock: scan src-1: airlock: read not a url at all: no such file or directory"}}},
			nil, "Source added, but its scan failed: airlock: scan src-1: airlock: read not a url at all", false},
		{"no specs", &workflows.ScanOutput{Reports: []workflows.ScanReport{{SourceID: "src-1", Errors: []string{"x.yaml: not a spec"}}}},
			nil, "Source added, but its scan failed: it found no spec: x.yaml: not a spec", false},
		{"workflow failed", nil, errors.New("workflow timed out"), "Source added, but its scan failed: workflow timed out", false},
		{"found", &workflows.ScanOutput{Reports: []workflows.ScanReport{{SourceID: "src-1", Specs: 1, NewSpecs: []workflows.FoundSpec{{}}}}},
			nil, "Source added and scanned: 1 spec(s), 1 new", true},
	} {
		b, e := newBrowser(t)
		e.tc.scan, e.tc.scanErr = c.scan, c.scanErr
		b.signIn(e.admin)
		w := b.submit("/ui/sources/add", url.Values{"csrf": {b.formToken("/ui/sources")}, "location": {"https://specs.example/x.yaml"}})
		body := w.Body.String()
		if !strings.Contains(body, c.want) || strings.Contains(body, "class=\"flash\"") != c.ok {
			t.Errorf("%s: %d, want %q (flash %v) in\n%s", c.name, w.Code, c.want, c.ok, body)
		}
	}
}

// A review whose title's name is already another spec's says so at the top
// of its page, with the name its tools will get.
func TestReviewPageWarnsOfANameCollision(t *testing.T) {
	b, e := newBrowser(t)
	e.tc.states["airlock-b"] = workflows.AirlockState{Status: workflows.AirlockPending, Review: workflows.SpecReview{Title: "Swagger Petstore",
		Slug: "swagger_petstore_petstore_expanded", Location: "https://x.example/petstore-expanded.yml", NameTakenBy: "https://x.example/petstore.yml"}}
	e.tc.states["airlock-c"] = workflows.AirlockState{Status: workflows.AirlockPending, Review: workflows.SpecReview{Title: "Zoo API", Slug: "zoo_api_zoo",
		Location: "https://b.example/zoo.yaml", NameTakenBy: "https://a.example/zoo.yaml", NamePending: true}}
	e.tc.states["airlock-a"] = workflows.AirlockState{Status: workflows.AirlockPending, Review: workflows.SpecReview{Title: "Swagger Petstore", Slug: "swagger_petstore"}}
	b.signIn(e.admin)
	body := b.do("GET", "/ui/reviews/airlock-b", nil).Body.String()
	if !strings.Contains(body, "Name collision: another spec (https://x.example/petstore.yml)") ||
		!strings.Contains(body, "<code>swagger_petstore_petstore_expanded.&lt;operation&gt;</code>") {
		t.Fatalf("review page:\n%s", body)
	}
	// The other spec is a review pending too, which reserved the name.
	body = b.do("GET", "/ui/reviews/airlock-c", nil).Body.String()
	if !strings.Contains(body, "another spec (https://a.example/zoo.yaml) is pending review too and has reserved this API's name") ||
		!strings.Contains(body, "<code>zoo_api_zoo.&lt;operation&gt;</code>") {
		t.Fatalf("review page, name reserved by a pending review:\n%s", body)
	}
	if body := b.do("GET", "/ui/reviews/airlock-a", nil).Body.String(); strings.Contains(body, "Name collision") {
		t.Fatalf("a review without a collision warns:\n%s", body)
	}
}

// A POST ends in a redirect to a GET page that shows its result once: a
// reload of that page shows it no more and sends nothing. A validation
// error is said once.
func TestPostRedirectGetShowsTheResultOnce(t *testing.T) {
	b, e := newBrowser(t)
	e.tc.states["airlock-x"] = workflows.AirlockState{Status: workflows.AirlockPending, Review: workflows.SpecReview{Title: "Pets", Slug: "pets",
		Operations: []workflows.ReviewOperation{{Name: "list", Method: "GET", Path: "/pets"}}}}
	b.signIn(e.admin)
	got := b.submit("/ui/reviews/airlock-x/approve", url.Values{"csrf": {b.formToken("/ui/reviews/airlock-x")}, "softBudget": {"10"}, "hardBudget": {"5"},
		"costPerCall": {"1"}, "operations": {"list"}, "operationsShown": {"1"}}).Body.String()
	if n := strings.Count(got, "must not exceed hardBudget"); n != 1 {
		t.Fatalf("the budget message appears %d times:\n%s", n, got)
	}
	if !strings.Contains(got, `name="softBudget" inputmode="decimal" pattern="[0-9]{1,12}([.][0-9]{1,6})?" title="a number, such as 0.05" value="10"`) {
		t.Fatalf("the form lost what was typed:\n%s", got)
	}
	again := b.do("GET", "/ui/reviews/airlock-x", nil).Body.String()
	if strings.Contains(again, "must not exceed") || len(e.tc.called()) != 0 {
		t.Fatalf("a reload shows the old result again or sends a decision: %v\n%s", e.tc.called(), again)
	}
}

// A decision sent to a build that is still writing is refused, and the
// review page says why (it has no dialogs to show the error in).
func TestDecisionOnAWritingBuildSaysWhy(t *testing.T) {
	b, e := newBrowser(t)
	e.tc.states["airlock-x"] = workflows.AirlockState{Status: workflows.AirlockPending, Review: workflows.SpecReview{Title: "Pets", Slug: "pets"}}
	writing := workflows.BuildState{Status: workflows.BuildWriting, Input: workflows.BuildInput{Verb: "ROMAN_NUMERAL"}, Rounds: []workflows.BuildRound{}}
	e.tc.states["build-ROMAN_NUMERAL"] = writing.AirlockView("build-ROMAN_NUMERAL")
	b.signIn(e.admin)
	csrf := b.formToken("/ui/reviews/airlock-x")
	for _, d := range []struct {
		path string
		form url.Values
	}{{"approve", url.Values{"csrf": {csrf}}}, {"reject", url.Values{"csrf": {csrf}, "reason": {"too soon"}}}} {
		got := b.submit("/ui/reviews/build-ROMAN_NUMERAL/"+d.path, d.form).Body.String()
		if !strings.Contains(got, "is still writing and testing its program (round 1), not pending") {
			t.Fatalf("%s while writing: the page does not say why:\n%s", d.path, got)
		}
	}
	if calls := e.tc.called(); len(calls) != 0 {
		t.Fatalf("a decision was sent to a writing build: %v", calls)
	}
}

// An unknown review says what to do next and renders no empty review.
func TestUnknownReviewSaysWhatToDoNext(t *testing.T) {
	b, e := newBrowser(t)
	b.signIn(e.admin)
	w := b.do("GET", "/ui/reviews/airlock-missing", nil)
	body := w.Body.String()
	if w.Code != http.StatusNotFound || !strings.Contains(body, "No such review") || strings.Contains(body, "Operations") || !strings.Contains(body, `href="/ui/reviews"`) {
		t.Fatalf("unknown review: %d\n%s", w.Code, body)
	}
	for _, p := range []string{"/ui/nowhere", "/ui/reviews/a/b/c"} {
		if w := b.do("GET", p, nil); w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), "Page not found") {
			t.Fatalf("unknown page %s: %d", p, w.Code)
		}
	}
}

// A not-found page quotes at most fault.MaxEcho characters of the tool id
// or path it did not find, as every error does, however long the path (a
// tool id is at most httpx.MaxIDLen characters: a longer one is a 400).
func TestNotFoundPagesCutTheEcho(t *testing.T) {
	b, _ := newBrowser(t)
	long := strings.Repeat("x", 3000)
	for p, title := range map[string]string{"/ui/tools/" + long[:httpx.MaxIDLen]: "No such tool", "/ui/" + long: "Page not found"} {
		w := b.do("GET", p, nil)
		body := w.Body.String()
		if w.Code != http.StatusNotFound || !strings.Contains(body, title) || strings.Contains(body, strings.Repeat("x", fault.MaxEcho+1)) ||
			!strings.Contains(body, strings.Repeat("x", fault.MaxEcho/2)) {
			t.Fatalf("GET %.40s…: %d, want a 404 quoting at most %d characters of it\n%.300s", p, w.Code, fault.MaxEcho, body)
		}
	}
}

func TestFavicon(t *testing.T) {
	b, _ := newBrowser(t)
	w := b.do("GET", "/favicon.ico", nil)
	if w.Code != http.StatusMovedPermanently || w.Header().Get("Location") != "/ui/static/favicon.svg" {
		t.Fatalf("favicon.ico: %d %s", w.Code, w.Header().Get("Location"))
	}
	if w := b.do("GET", "/ui/static/favicon.svg", nil); w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "image/svg") {
		t.Fatalf("favicon.svg: %d %s", w.Code, w.Header().Get("Content-Type"))
	}
}

// putTools stores n public tools of category pets and module zoo.
func (e *env) putTools(n int) {
	e.t.Helper()
	for i := range n {
		id := "pets.t" + string(rune('a'+i/10)) + string(rune('0'+i%10))
		vec := e.emb.Vector("pet " + id)
		_, err := e.st.UpsertTool(context.Background(), graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Verb: "GET_PET", Name: "Pet " + id,
			Category: "pets", Module: "zoo", Status: graph.StatusActive, Groups: []string{"default"}, Permissions: []string{"public"},
			RequiredParams: []string{}, OptionalParams: []string{}}, Description: "A pet.", Embedding: vec, Manifest: json.RawMessage(`{"toolId":"` + id + `"}`)})
		if err != nil {
			e.t.Fatal(err)
		}
	}
}

// Without search text the Tools page browses the catalogue: most used
// first, a next page that keeps the filters, a first page from the next.
func TestToolsBrowsePages(t *testing.T) {
	b, e := newBrowser(t)
	e.putTools(30)
	b.signIn(e.admin)
	body := b.do("GET", "/ui/tools?category=pets&module=zoo", nil).Body.String()
	if !strings.Contains(body, `href="/ui/tools/pets.ta0"`) || !strings.Contains(body, `href="/ui/tools?category=pets&amp;cursor=25&amp;module=zoo"`) || strings.Contains(body, "First page") {
		t.Fatalf("first page:\n%s", body)
	}
	body = b.do("GET", "/ui/tools?category=pets&cursor=25&module=zoo", nil).Body.String()
	if !strings.Contains(body, `href="/ui/tools/pets.tc9"`) || strings.Contains(body, "Next page") || !strings.Contains(body, `href="/ui/tools?category=pets&amp;module=zoo">First page`) {
		t.Fatalf("second page:\n%s", body)
	}
	if w := b.do("GET", "/ui/tools?status=gone", nil); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "status") {
		t.Fatalf("a bad filter: %d", w.Code)
	}
	if w := b.do("GET", "/ui/tools?sort=id&cursor=pets.ta0", nil); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "cursor") {
		t.Fatalf("a cursor the console did not issue: %d", w.Code)
	}
	// A tool's page, for a guest too (the tools are public).
	guest := e.browser(b.c)
	if w := guest.do("GET", "/ui/tools/pets.ta0", nil); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "Pet pets.ta0") || strings.Contains(w.Body.String(), `class="error"`) {
		t.Fatalf("tool page: %d\n%s", w.Code, w.Body)
	}
	if w := guest.do("GET", "/ui/tools/pets.nope", nil); w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), "No such tool") {
		t.Fatalf("unknown tool: %d", w.Code)
	}
	if w := guest.do("GET", "/ui/tools?q=pet", nil); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `href="/ui/tools/pets.`) {
		t.Fatalf("search: %d\n%s", w.Code, w.Body)
	}
}

// The audit page filters (times from the form's local time as UTC), links
// each object to its page, and pages by cursor keeping the filters.
func TestAuditPages(t *testing.T) {
	b, e := newBrowser(t)
	ctx := context.Background()
	for _, ev := range []graph.AuditEvent{
		{At: time.Date(2026, 7, 1, 5, 0, 0, 0, time.UTC), Actor: "key:k1", Action: "tools.register", Tool: "pets.list", Outcome: "success", Route: "POST /api/v1/tools/register"},
		{At: time.Date(2026, 7, 1, 6, 0, 0, 0, time.UTC), Actor: "key:k1", Action: "tools.pending.approve", Tool: "airlock-a", Outcome: "success", Route: "POST /api/v1/tools/pending/:id/approve"},
		{At: time.Date(2026, 7, 1, 7, 0, 0, 0, time.UTC), Actor: "key:k9", Action: "tools.register", Tool: "other.tool", Outcome: "success", Route: "POST /api/v1/tools/register"},
	} {
		if err := e.log.Record(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	b.signIn(e.admin)
	body := b.do("GET", "/ui/audit?actor=key:k1&since=2026-07-01T04:30", nil).Body.String()
	if !strings.Contains(body, `href="/ui/reviews/airlock-a"`) || !strings.Contains(body, `href="/ui/tools/pets.list"`) || strings.Contains(body, "other.tool") {
		t.Fatalf("filtered page:\n%s", body)
	}
	if body := b.do("GET", "/ui/audit?actor=key:k1&since=2026-07-01T05:30", nil).Body.String(); strings.Contains(body, `href="/ui/tools/pets.list"`) || !strings.Contains(body, "airlock-a") {
		t.Fatalf("since filter:\n%s", body)
	}
	if w := b.do("GET", "/ui/audit?until=yesterday", nil); w.Code != 400 || !strings.Contains(w.Body.String(), "Until must be a time") {
		t.Fatalf("bad time: %d", w.Code)
	}
}

// Keys: an admin creates a key, sees its secret once, and revokes it;
// both are audited as the API's key routes.
func TestKeysPage(t *testing.T) {
	b, e := newBrowser(t)
	b.signIn(e.admin)
	got := b.submit("/ui/keys/create", url.Values{"csrf": {b.formToken("/ui/keys")}, "owner": {"cy"}, "level": {"user"}, "roles": {"approver"}}).Body.String()
	m := regexp.MustCompile(`tsk_[A-Za-z0-9_-]+`).FindString(got)
	if m == "" {
		t.Fatalf("no secret shown:\n%s", got)
	}
	if again := b.do("GET", "/ui/keys", nil).Body.String(); strings.Contains(again, m) {
		t.Fatal("the secret is shown again")
	}
	k, err := e.keys.Verify(context.Background(), m)
	if err != nil || k.Owner != "cy" {
		t.Fatalf("created key: %+v %v", k, err)
	}
	got = b.submit("/ui/keys/"+k.ID+"/revoke", url.Values{"csrf": {b.formToken("/ui/keys")}}).Body.String()
	if !strings.Contains(got, "revoked") {
		t.Fatalf("revoke:\n%s", got)
	}
	if _, err := e.keys.Verify(context.Background(), m); err == nil {
		t.Fatal("the revoked key still works")
	}
	page, _ := e.log.Query(context.Background(), graph.AuditQuery{Actor: "key:" + mustKeyID(t, e.admin)})
	if len(page.Items) != 2 || page.Items[0].Route != "DELETE /api/v1/admin/keys/:id" || page.Items[1].Route != "POST /api/v1/admin/keys" {
		t.Fatalf("audited: %+v", page.Items)
	}
	// Bad input names the field.
	got = b.submit("/ui/keys/create", url.Values{"csrf": {b.formToken("/ui/keys")}, "owner": {""}, "level": {"king"}}).Body.String()
	if !strings.Contains(got, "owner") || !strings.Contains(got, "level") {
		t.Fatalf("bad key request:\n%s", got)
	}
}

func mustKeyID(t *testing.T, secret string) string {
	id, ok := identity.ParseSecret(secret)
	if !ok {
		t.Fatalf("not a secret: %q", secret)
	}
	return id
}

// Every API route a page stands for has a row in the API's table (a
// mistyped route would refuse the page for everyone).
func TestEveryPageRouteHasARule(t *testing.T) {
	owner := identity.Principal{Subject: "key:k0", Method: identity.MethodAPIKey, KeyID: "k0", Level: "owner"}
	g := api.NewGate(nil, nil, nil)
	for _, r := range []struct{ method, route string }{
		{"GET", routePending}, {"GET", routeReview}, {"GET", routeTimeline}, {"POST", routeApprove}, {"POST", routeReject},
		{"GET", routeDecided}, {"GET", routeSources}, {"POST", routeSources}, {"POST", routeScan}, {"DELETE", routeSource},
		{"GET", routeNotes}, {"POST", routeEnable}, {"GET", routeSearch}, {"GET", routeTools}, {"GET", routeTool},
		{"GET", routeHistory}, {"GET", routeManifest}, {"GET", routeKeys}, {"POST", routeKeys}, {"DELETE", routeKey},
		{"GET", routeAudit}, {"GET", routeAnalytics}, {"GET", routeGaps}, {"GET", routeSeries}, {"GET", routeVersions}, {"GET", whoamiRoute},
	} {
		if err := g.Allow(context.Background(), r.method, r.route, "", owner, "127.0.0.1"); err != nil {
			t.Errorf("%s %s: %v", r.method, r.route, err)
		}
	}
	if err := g.Allow(context.Background(), "GET", "/api/v1/nowhere", "", owner, "127.0.0.1"); err == nil {
		t.Error("a route without a row is allowed")
	}
}

// A review's page says how many tools its onboarding registered, counted
// before the ids are narrowed, and names only those the signed-in
// approver may run: "0 tool(s)" never stands for tools it may not see.
func TestReviewPageCountsToolsItDoesNotName(t *testing.T) {
	b, e := newBrowser(t)
	ctx := context.Background()
	for id, perm := range map[string]string{"pet_clinic.list_pets": access.AnyOf([]string{"vet"}, nil), "pet_clinic.add_pet": access.AnyOf([]string{"vet"}, nil),
		"pet_clinic.get_pet": "public"} {
		if _, err := e.st.UpsertTool(ctx, graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Verb: "FIND_PET", Name: id, Category: "pets",
			Status: graph.StatusActive, Groups: []string{"default"}, Permissions: []string{perm}}, Description: "Pets.", Embedding: e.emb.Vector(id),
			Manifest: json.RawMessage(`{"toolId":"` + id + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	// The operations table names each operation's tool, but not one the
	// admin may not run.
	ops := []workflows.ReviewOperation{{Name: "list_pets", Method: "GET", Path: "/pets"}, {Name: "add_pet", Method: "POST", Path: "/pets"},
		{Name: "get_pet", Method: "GET", Path: "/pets/{id}"}}
	e.tc.states["airlock-vet"] = workflows.AirlockState{Status: workflows.AirlockOnboarded, Review: workflows.SpecReview{Title: "Pet clinic", Slug: "pet_clinic", Operations: ops},
		Outcome: &workflows.AirlockOutcome{Status: workflows.AirlockOnboarded, Reviewer: "ana", ToolIDs: []string{"pet_clinic.list_pets", "pet_clinic.add_pet"}}}
	e.tc.states["airlock-mixed"] = workflows.AirlockState{Status: workflows.AirlockOnboarded, Review: workflows.SpecReview{Title: "Pet clinic", Slug: "pet_clinic", Operations: ops},
		Outcome: &workflows.AirlockOutcome{Status: workflows.AirlockOnboarded, Reviewer: "ana", ToolIDs: []string{"pet_clinic.list_pets", "pet_clinic.get_pet"}}}
	b.signIn(e.admin)
	body := b.do("GET", "/ui/reviews/airlock-vet", nil).Body.String()
	if !strings.Contains(body, "2 tools were registered; you may run none of them.") || strings.Contains(body, "pet_clinic.list_pets") || strings.Contains(body, "pet_clinic.add_pet") {
		t.Fatalf("review of tools the admin may not run:\n%s", body)
	}
	body = b.do("GET", "/ui/reviews/airlock-mixed", nil).Body.String()
	if !strings.Contains(body, "2 tools were registered; you may run 1 of them:") || !strings.Contains(body, `href="/ui/tools/pet_clinic.get_pet"`) || strings.Contains(body, "pet_clinic.list_pets") {
		t.Fatalf("review of tools the admin may run one of:\n%s", body)
	}
	if !strings.Contains(body, "/pets/{id}") || !strings.Contains(body, "a tool you may not run") {
		t.Fatalf("the operations table should list every operation, hiding the tools' ids:\n%s", body)
	}
	// A reader who may run every tool the review registered sees each
	// operation's tool.
	e.tc.states["airlock-public"] = workflows.AirlockState{Status: workflows.AirlockOnboarded, Review: workflows.SpecReview{Title: "Pet clinic", Slug: "pet_clinic", Operations: ops},
		Outcome: &workflows.AirlockOutcome{Status: workflows.AirlockOnboarded, Reviewer: "ana", ToolIDs: []string{"pet_clinic.get_pet"}}}
	body = b.do("GET", "/ui/reviews/airlock-public", nil).Body.String()
	if !strings.Contains(body, `href="/ui/tools/pet_clinic.get_pet"`) || !strings.Contains(body, "<code>pet_clinic.list_pets</code>") {
		t.Fatalf("review of tools the admin may all run:\n%s", body)
	}
}

// The console's source form follows the API's rule: a local file or
// folder is the owner's to register, so an admin is told why and nothing
// is stored; the owner adds one.
func TestSourceFormLeavesLocalPathsToTheOwner(t *testing.T) {
	b, e := newBrowser(t)
	b.signIn(e.admin)
	w := b.submit("/ui/sources/add", url.Values{"csrf": {b.formToken("/ui/sources")}, "location": {"/root"}})
	if srcs, _ := e.st.Sources(context.Background()); !strings.Contains(w.Body.String(), "only the owner may register one") || len(srcs) != 0 {
		t.Fatalf("an admin adds /root: %d %v\n%s", w.Code, srcs, w.Body.String())
	}
	_, owner, err := e.keys.Create(context.Background(), identity.Principal{}, identity.NewKey{Owner: "olu", Level: "owner"})
	if err != nil {
		t.Fatal(err)
	}
	o := e.browser(e.console())
	o.signIn(owner)
	o.submit("/ui/sources/add", url.Values{"csrf": {o.formToken("/ui/sources")}, "location": {t.TempDir()}})
	if srcs, _ := e.st.Sources(context.Background()); len(srcs) != 1 {
		t.Fatalf("the owner's folder: %v", srcs)
	}
}
