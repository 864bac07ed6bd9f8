package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// fakeAPI answers whoami for one good key and records every other call.
type fakeAPI struct {
	mu    sync.Mutex
	calls []string
	// added is the data of POST /tools/sources (default: empty).
	added string
	// review is the data of GET /tools/pending/{id} (default: empty).
	review string
}

const goodKey = "tsk_good"

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls = append(f.calls, r.Method+" "+r.URL.Path)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer "+goodKey {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"message":"unknown API key"}}`))
		return
	}
	switch r.URL.Path {
	case "/api/v1/whoami":
		_ = json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"principal": map[string]any{
			"subject": "key:k1", "name": "ana", "method": "api_key", "level": "admin"}}})
	case "/api/v1/tools/sources":
		if r.Method == http.MethodPost && f.added != "" {
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"data":` + f.added + `}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":{"sources":[]}}`))
	case "/api/v1/tools":
		if r.URL.Query().Get("cursor") == "" {
			_, _ = w.Write([]byte(`{"data":{"items":[{"toolId":"pets.list","name":"List pets","uses":7}],"count":1,"nextCursor":"25","matched":30}}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":{"items":[{"toolId":"pets.get","name":"Get pet","uses":0}],"count":1,"matched":30}}`))
	case "/api/v1/admin/audit":
		q := r.URL.Query()
		f.mu.Lock()
		f.calls = append(f.calls, "audit?"+q.Encode())
		f.mu.Unlock()
		if q.Get("before") == "" {
			_, _ = w.Write([]byte(`{"data":{"items":[{"id":"e2","at":"2026-07-01T06:00:00Z","actor":"key:k1","action":"tools.pending.approve","tool":"airlock-a","outcome":"success","route":"POST /api/v1/tools/pending/:id/approve"}],"next":"e2"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":{"items":[{"id":"e1","at":"2026-07-01T05:00:00Z","actor":"key:k1","action":"tools.register","tool":"pets.list","outcome":"success","route":"POST /api/v1/tools/register"}]}}`))
	case "/api/v1/tools/pending/airlock-missing":
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"message":"no review \"airlock-missing\""}}`))
	case "/api/v1/tools/pending/airlock-x/approve":
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"message":"policy.softBudget: must not exceed hardBudget (5)","fields":[{"path":"policy.softBudget","message":"must not exceed hardBudget (5)"},{"path":"policy.softBudget","message":"must not exceed hardBudget (5)"}]}}`))
	default:
		if strings.HasPrefix(r.URL.Path, "/api/v1/tools/pending/") && f.review != "" {
			_, _ = w.Write([]byte(`{"data":` + f.review + `}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":{}}`))
	}
}

func (f *fakeAPI) called(prefix string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.calls {
		if strings.HasPrefix(c, prefix) {
			return true
		}
	}
	return false
}

// browser keeps cookies across requests to the console.
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

func newBrowser(t *testing.T) (*browser, *fakeAPI) {
	api := &fakeAPI{}
	return &browser{t: t, c: New(api, Config{TemporalUI: "http://ui.invalid"}), cookies: map[string]*http.Cookie{}}, api
}

func (b *browser) signIn(key string) *httptest.ResponseRecorder {
	b.t.Helper()
	page := b.do("GET", "/ui/signin", nil)
	return b.do("POST", "/ui/signin", url.Values{"key": {key}, "csrf": {token(b.t, page.Body.String())}})
}

func TestSignInSetsAStrictHttpOnlySessionCookie(t *testing.T) {
	b, _ := newBrowser(t)
	w := b.signIn(goodKey)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/ui/dashboard" { // an admin's first page
		t.Fatalf("sign in: %d %s", w.Code, w.Body)
	}
	ck := b.cookies[CookieName]
	if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Value == "" || strings.Contains(ck.Value, goodKey) {
		t.Fatalf("session cookie: %+v", ck)
	}
	if page := b.do("GET", "/ui/sources", nil); page.Code != http.StatusOK || !strings.Contains(page.Body.String(), "ana") {
		t.Fatalf("signed-in page: %d %s", page.Code, page.Body)
	}
	// Signing out ends the session on the server, not only in the browser.
	stolen := *ck
	page := b.do("GET", "/ui/sources", nil)
	if w := b.do("POST", "/ui/signout", url.Values{"csrf": {token(t, page.Body.String())}}); w.Code != http.StatusSeeOther {
		t.Fatalf("sign out: %d", w.Code)
	}
	b.cookies[CookieName] = &stolen
	if w := b.do("GET", "/ui/sources", nil); w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/ui/signin" {
		t.Fatalf("after sign-out the old cookie still works: %d", w.Code)
	}
}

func TestSignInRefusals(t *testing.T) {
	b, api := newBrowser(t)
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
	// Without the sign-in form's token (a cross-site login) nothing is asked of the API.
	api.calls = nil
	w := b.do("POST", "/ui/signin", url.Values{"key": {goodKey}, "csrf": {"forged"}})
	if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "expired") || api.called("GET /api/v1/whoami") {
		t.Fatalf("forged sign-in: %d %v", w.Code, api.calls)
	}
}

func TestEveryFormNeedsTheSessionToken(t *testing.T) {
	b, api := newBrowser(t)
	b.signIn(goodKey)
	api.calls = nil
	for _, path := range []string{"/ui/sources/add", "/ui/sources/scan", "/ui/reviews/airlock-x/approve", "/ui/reviews/airlock-x/reject", "/ui/tools/pets.list/enable", "/ui/signout"} {
		for _, csrf := range []string{"", "stale"} {
			w := b.do("POST", path, url.Values{"csrf": {csrf}, "location": {"https://example.com/spec.yaml"}, "reason": {"no"}})
			if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "expired") {
				t.Fatalf("POST %s with token %q: %d", path, csrf, w.Code)
			}
		}
	}
	if len(api.calls) != 0 {
		t.Fatalf("forms without the token reached the API: %v", api.calls)
	}
	// An oversized form is refused before it is read.
	page := b.do("GET", "/ui/sources", nil)
	w := b.do("POST", "/ui/sources/add", url.Values{"csrf": {token(t, page.Body.String())}, "location": {strings.Repeat("x", maxForm)}})
	if w.Code != http.StatusBadRequest {
		t.Fatalf("oversized form: %d", w.Code)
	}
}

func TestSourceFormRefusesEmptyAndLongLocations(t *testing.T) {
	b, api := newBrowser(t)
	b.signIn(goodKey)
	for _, loc := range []string{"", "   ", strings.Repeat("x", 2001)} {
		page := b.do("GET", "/ui/sources", nil)
		api.calls = nil
		w := b.submit("/ui/sources/add", url.Values{"csrf": {token(t, page.Body.String())}, "location": {loc}})
		if !strings.Contains(w.Body.String(), "URL, file or folder") || api.called("POST") {
			t.Fatalf("location %.10q: %d %v", loc, w.Code, api.calls)
		}
	}
}

func TestPolicyFromForm(t *testing.T) {
	ok, errs := policyFromForm(url.Values{"rateLimitPerMinute": {"60"}, "quotaPerDay": {" 100 "}, "costPerCall": {"0.05"},
		"allowedRoles": {"vet, nurse"}, "baseUrl": {"https://pets.example.com/v1"}, "operations": {"list_pets"}, "operationsShown": {"1"}})
	if len(errs) != 0 || ok["quotaPerDay"] != 100 || ok["costPerCall"] != 0.05 || len(ok["allowedRoles"].([]string)) != 2 || ok["baseUrl"] == nil {
		t.Fatalf("good policy: %v %v", ok, errs)
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
	for _, p := range []string{"/ui/reviews", "/ui/reviews/airlock-x", "/ui/sources", "/ui/notifications", "/ui/gaps"} {
		if w := b.do("GET", p, nil); w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/ui/signin" {
			t.Errorf("GET %s signed out: %d", p, w.Code)
		}
	}
	w := b.do("GET", "/ui/static/console.css", nil)
	if w.Code != http.StatusOK || !strings.Contains(w.Header().Get("Content-Type"), "css") {
		t.Fatalf("static: %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Fatalf("CSP: %q", csp)
	}
}

// "Add and scan" reports what the first scan found: a location that cannot
// be read (the API's 201 carries the scan's error) or that holds no spec is
// an error on the page, not a green "scanned".
func TestAddSourceReportsAFailedScan(t *testing.T) {
	for _, c := range []struct {
		name, added, want string
		ok                bool
	}{
		{"unreadable", `{"source":{"id":"src-1","specs":0,"lastError":"airlock: read not a url at all: no such file or directory"},
			"scan":{"status":"completed","report":{"sourceId":"src-1","specs":0,"newSpecs":[],"error":"airlock: scan src-1: airlock: read not a url at all: no such file or directory"}}}`,
			"Source added, but its scan failed: airlock: scan src-1: airlock: read not a url at all", false},
		{"no specs", `{"source":{"id":"src-1","specs":0},"scan":{"status":"completed","report":{"sourceId":"src-1","specs":0,"newSpecs":[],"errors":["x.yaml: not a spec"]}}}`,
			"Source added, but its scan failed: it found no spec: x.yaml: not a spec", false},
		{"workflow failed", `{"source":{"id":"src-1"},"scan":{"status":"failed","error":"workflow timed out"}}`,
			"Source added, but its scan failed: workflow timed out", false},
		{"found", `{"source":{"id":"src-1","specs":1},"scan":{"status":"completed","report":{"sourceId":"src-1","specs":1,"newSpecs":[{"hash":"ab"}]}}}`,
			"Source added and scanned: 1 spec(s), 1 new", true},
	} {
		b, api := newBrowser(t)
		api.added = c.added
		b.signIn(goodKey)
		page := b.do("GET", "/ui/sources", nil)
		w := b.submit("/ui/sources/add", url.Values{"csrf": {token(t, page.Body.String())}, "location": {"not a url at all"}})
		body := w.Body.String()
		if !strings.Contains(body, c.want) || strings.Contains(body, "class=\"flash\"") != c.ok {
			t.Errorf("%s: %d, want %q (flash %v) in\n%s", c.name, w.Code, c.want, c.ok, body)
		}
	}
}

// A review whose title's name is already another spec's says so at the top
// of its page, with the name its tools will get.
func TestReviewPageWarnsOfANameCollision(t *testing.T) {
	b, api := newBrowser(t)
	api.review = `{"id":"airlock-b","state":{"status":"pending","review":{"title":"Swagger Petstore","slug":"swagger_petstore_petstore_expanded",
		"location":"https://x.example/petstore-expanded.yml","nameTakenBy":"https://x.example/petstore.yml","operations":[]}}}`
	b.signIn(goodKey)
	body := b.do("GET", "/ui/reviews/airlock-b", nil).Body.String()
	if !strings.Contains(body, "Name collision: another spec (https://x.example/petstore.yml)") ||
		!strings.Contains(body, "<code>swagger_petstore_petstore_expanded.&lt;operation&gt;</code>") {
		t.Fatalf("review page:\n%s", body)
	}
	// The other spec is a review pending too, which reserved the name.
	api.review = `{"id":"airlock-c","state":{"status":"pending","review":{"title":"Zoo API","slug":"zoo_api_zoo",
		"location":"https://b.example/zoo.yaml","nameTakenBy":"https://a.example/zoo.yaml","namePending":true,"operations":[]}}}`
	body = b.do("GET", "/ui/reviews/airlock-c", nil).Body.String()
	if !strings.Contains(body, "another spec (https://a.example/zoo.yaml) is pending review too and has reserved this API's name") ||
		!strings.Contains(body, "<code>zoo_api_zoo.&lt;operation&gt;</code>") {
		t.Fatalf("review page, name reserved by a pending review:\n%s", body)
	}
	api.review = `{"id":"airlock-a","state":{"status":"pending","review":{"title":"Swagger Petstore","slug":"swagger_petstore","operations":[]}}}`
	if body := b.do("GET", "/ui/reviews/airlock-a", nil).Body.String(); strings.Contains(body, "Name collision") {
		t.Fatalf("a review without a collision warns:\n%s", body)
	}
}

// A POST ends in a redirect to a GET page that shows its result once: a
// reload of that page shows it no more and sends nothing to the API. A
// validation error is said once, however the API repeats it.
func TestPostRedirectGetShowsTheResultOnce(t *testing.T) {
	b, api := newBrowser(t)
	api.review = `{"id":"airlock-x","state":{"status":"pending","review":{"title":"Pets","slug":"pets","operations":[{"name":"list","method":"GET","path":"/pets"}]}}}`
	b.signIn(goodKey)
	page := b.do("GET", "/ui/reviews/airlock-x", nil)
	got := b.submit("/ui/reviews/airlock-x/approve", url.Values{"csrf": {token(t, page.Body.String())}, "softBudget": {"10"}, "hardBudget": {"5"},
		"costPerCall": {"1"}, "operations": {"list"}, "operationsShown": {"1"}}).Body.String()
	if n := strings.Count(got, "must not exceed hardBudget"); n != 1 {
		t.Fatalf("the budget message appears %d times:\n%s", n, got)
	}
	if !strings.Contains(got, `name="softBudget" inputmode="decimal" pattern="[0-9]{1,12}([.][0-9]{1,6})?" title="a number, such as 0.05" value="10"`) {
		t.Fatalf("the form lost what was typed:\n%s", got)
	}
	api.calls = nil
	again := b.do("GET", "/ui/reviews/airlock-x", nil).Body.String()
	if strings.Contains(again, "must not exceed") || api.called("POST") {
		t.Fatalf("a reload shows the old result again or posts: %v\n%s", api.calls, again)
	}
}

// An unknown review says what to do next and renders no empty review.
func TestUnknownReviewSaysWhatToDoNext(t *testing.T) {
	b, _ := newBrowser(t)
	b.signIn(goodKey)
	w := b.do("GET", "/ui/reviews/airlock-missing", nil)
	body := w.Body.String()
	if w.Code != http.StatusNotFound || !strings.Contains(body, "No such review") || strings.Contains(body, "Operations") || !strings.Contains(body, `href="/ui/reviews"`) {
		t.Fatalf("unknown review: %d\n%s", w.Code, body)
	}
	if w := b.do("GET", "/ui/nowhere", nil); w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), "Page not found") {
		t.Fatalf("unknown page: %d", w.Code)
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

// Without search text the Tools page browses the catalogue: most used
// first, a next page that keeps the filters, a first page from the next.
func TestToolsBrowsePages(t *testing.T) {
	b, api := newBrowser(t)
	b.signIn(goodKey)
	body := b.do("GET", "/ui/tools?category=pets&module=zoo", nil).Body.String()
	if !strings.Contains(body, `href="/ui/tools/pets.list"`) || !strings.Contains(body, `href="/ui/tools?category=pets&amp;cursor=25&amp;module=zoo"`) || strings.Contains(body, "First page") {
		t.Fatalf("first page:\n%s", body)
	}
	if !api.called("GET /api/v1/tools") {
		t.Fatal("the page did not ask the API")
	}
	body = b.do("GET", "/ui/tools?category=pets&cursor=25&module=zoo", nil).Body.String()
	if !strings.Contains(body, `href="/ui/tools/pets.get"`) || strings.Contains(body, "Next page") || !strings.Contains(body, `href="/ui/tools?category=pets&amp;module=zoo">First page`) {
		t.Fatalf("second page:\n%s", body)
	}
}

// The audit page sends its filters to the API (times from the form's
// local time as UTC), links each object to its page, and pages by cursor
// keeping the filters.
func TestAuditPages(t *testing.T) {
	b, api := newBrowser(t)
	b.signIn(goodKey)
	body := b.do("GET", "/ui/audit?actor=key:k1&since=2026-07-01T05:30", nil).Body.String()
	if !api.called("audit?actor=key%3Ak1&limit=50&since=2026-07-01T05%3A30%3A00Z") {
		t.Fatalf("the API was asked %v", api.calls)
	}
	if !strings.Contains(body, `href="/ui/reviews/airlock-a"`) || !strings.Contains(body, `href="/ui/audit?actor=key%3Ak1&amp;before=e2&amp;since=2026-07-01T05%3A30" rel="next"`) {
		t.Fatalf("first page:\n%s", body)
	}
	body = b.do("GET", "/ui/audit?actor=key:k1&before=e2&since=2026-07-01T05:30", nil).Body.String()
	if !strings.Contains(body, `href="/ui/tools/pets.list"`) || strings.Contains(body, "Older events") || !strings.Contains(body, ">Newest</a>") {
		t.Fatalf("second page:\n%s", body)
	}
	if w := b.do("GET", "/ui/audit?until=yesterday", nil); w.Code != 400 || !strings.Contains(w.Body.String(), "Until must be a time") {
		t.Fatalf("bad time: %d", w.Code)
	}
}
