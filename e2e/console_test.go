package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/airlock/review"
	"github.com/toolsmith/toolsmith/analytics"
	"github.com/toolsmith/toolsmith/api"
	"github.com/toolsmith/toolsmith/api/admin"
	apiairlock "github.com/toolsmith/toolsmith/api/airlock"
	apianalytics "github.com/toolsmith/toolsmith/api/analytics"
	"github.com/toolsmith/toolsmith/api/ranking"
	apiretrieval "github.com/toolsmith/toolsmith/api/retrieval"
	"github.com/toolsmith/toolsmith/api/tools"
	"github.com/toolsmith/toolsmith/api/verbs"
	"github.com/toolsmith/toolsmith/audit"
	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/retrain"
	"github.com/toolsmith/toolsmith/web"
)

// chromium finds a Chromium to drive; the test fails without one when
// TOOLSMITH_REQUIRE_BROWSER is set (make test sets it; .ci/run installs
// the Debian package), and skips otherwise.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("TOOLSMITH_REQUIRE_BROWSER") != "" {
		t.Fatal("the console's browser tests need Chromium on PATH (Debian: apt-get install chromium)")
	}
	t.Skip("no Chromium on PATH")
	return ""
}

// browser is a test's handle on one Chromium tab.
type browser struct {
	t   *testing.T
	ctx context.Context
}

// stepTimeout bounds one step (an approval builds and tests a wrapper).
const stepTimeout = 150 * time.Second

// do runs steps, failing the test with the page's text on error.
func (b browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout) // a missing element fails the step, not the whole test's time
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		page, _ := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS("main")))
		b.t.Fatalf("%s: %v\npage: %s", what, err, page)
	}
}

// stale marks the page, so that fresh(sel) matches sel only on the page
// that a following click loads, never on this one.
func stale() chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`document.body.dataset.stale = "1"`)
}

// fresh waits for sel on a page loaded after stale.
func fresh(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS("body:not([data-stale]) " + sel))
}

// text is the text of the first element matching a CSS selector.
func (b browser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// eval evaluates a JavaScript expression.
func eval[T any](b browser, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// axeSource is axe-core (scripts/axe, installed by `make axe`, which
// `make test` runs); "" when it is not installed and not required.
var axeSource = sync.OnceValues(func() (string, error) {
	buf, err := os.ReadFile(filepath.Join("..", "scripts", "axe", "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		if os.Getenv("TOOLSMITH_REQUIRE_AXE") != "" {
			return "", fmt.Errorf("the accessibility check needs axe-core: `make axe` (npm ci --prefix scripts/axe): %w", err)
		}
		return "", nil
	}
	return string(buf), nil
})

// axeCheck runs axe-core's rules on the page and fails the test on a
// serious or critical violation.
func (b browser) axeCheck(name string) {
	b.t.Helper()
	src, err := axeSource()
	if err != nil {
		b.t.Fatal(err)
	}
	if src == "" {
		b.t.Logf("accessibility check of %s skipped: axe-core is not installed (make axe)", name)
		return
	}
	found, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](src+`;
axe.run(document, {resultTypes: ['violations']}).then(r => r.violations
  .filter(v => v.impact === 'serious' || v.impact === 'critical')
  .map(v => v.impact + ' ' + v.id + ': ' + v.help + ' at ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', ')))`, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("axe on %s: %v", name, err)
	}
	if len(found) > 0 {
		b.t.Fatalf("accessibility violations on %s:\n%s", name, strings.Join(found, "\n"))
	}
}

// shot checks the page's accessibility (axeCheck) and saves a screenshot
// of it as a test artifact under e2e/artifacts (gitignored).
func (b browser) shot(name string) {
	b.t.Helper()
	b.axeCheck(name)
	buf, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100)) // quality 100: PNG
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll("artifacts", 0o755); err != nil {
		b.t.Fatal(err)
	}
	path := filepath.Join("artifacts", name+".png")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot %s", path)
}

// TestConsoleInABrowser drives the review console in headless Chromium:
// sign in, add a spec source, open the review, approve it with a policy
// through the dialog (the real airlock builds and tests the wrapper), find
// the new tools in search with their score bars; a user without the
// approver role sees no approve button; a reject with a reason; bad input
// and a stale form token get a clear message.
func TestConsoleInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wrapper")
	}
	exe := chromium(t)
	e := airlockEnv(t, time.Hour)
	// Health checks disable an API after one failed probe here, and raise
	// the notification the console's re-enable button answers.
	notes := airlock.NewNotificationLog(e.store)
	health := &airlock.HealthChecker{Files: e.airlockFiles, Prober: &airlock.Prober{}, Tools: e.store, Notifier: notes, Threshold: 1}
	// The dashboard's series: searches through this API are counted by a
	// sampler, flushed by the test when it wants the numbers written.
	sampler := analytics.NewSampler(e.store, verbs.Runs{Temporal: e.client, Namespace: server.Namespace()}, graph.DefaultRetention)
	search := retrieval.New(e.store, hashing.New(embedDim), retrieval.Options{Observer: sampler})
	models, err := retrain.New(e.store, hashing.New(embedDim), search, retrieval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reviews := review.New(e.client, e.store, review.Config{TaskQueue: e.queue, Namespace: server.Namespace(), ReviewTimeout: time.Hour})
	runs := verbs.Runs{Temporal: e.client, Namespace: server.Namespace()}
	log := audit.New(e.store)
	console := web.New(web.Deps{Sessions: e.store, Auth: &identity.Authenticator{Keys: e.keys}, Keys: e.keys, Gate: api.NewGate(nil, log, nil),
		Audit: log, Registry: e.reg, Retrieval: search, Store: e.store, Runs: runs, Models: models, Reviews: reviews, Notes: notes, Enabler: health},
		web.Config{TemporalUI: "http://temporal-ui.invalid", Namespace: server.Namespace()})
	e.handlers = []api.Handler{
		{Methods: []string{http.MethodGet}, Path: "/ui", Handler: console},
		{Methods: []string{http.MethodGet, http.MethodPost}, Path: "/ui/*path", Handler: console},
		{Methods: []string{http.MethodGet}, Path: "/favicon.ico", Handler: console},
	}
	e.serve(verbs.New(e.client, e.store, verbs.Config{TaskQueue: e.queue, Namespace: server.Namespace()}),
		apiairlock.New(reviews).WithOperations(notes, health),
		apiretrieval.New(search), tools.New(e.reg), apianalytics.New(e.store, runs),
		admin.New(e.keys, log), ranking.New(models, e.client, e.queue))

	specs := serveFile(t, "../codegen/testdata/petstore/spec.yaml")
	rates := serveFile(t, "../codegen/testdata/swagger2/spec.json")
	var petAPIDown atomic.Bool
	petAPI := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if petAPIDown.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"id": "rex-1", "name": "Rex", "species": "dog"}]`))
	}))
	defer petAPI.Close()
	user := e.key(identity.NewKey{Owner: "ana", Level: "user"})

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.WindowSize(1280, 800),
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil { // start the browser without a deadline (see chromedp.Run)
		t.Fatalf("start Chromium: %v", err)
	}
	tctx, cancelT := context.WithTimeout(ctx, 6*time.Minute)
	defer cancelT()
	b := browser{t: t, ctx: tctx}
	base := e.api.URL + "/ui"
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	signIn := func(key string) {
		t.Helper()
		b.do("sign in", chromedp.Navigate(base+"/signin"), chromedp.WaitVisible(css("#key")),
			chromedp.SendKeys(css("#key"), key), chromedp.Submit(css("#key")),
			// Each key starts on the first page its menu offers: the
			// dashboard (admins), the pending reviews (approvers) or the tools.
			chromedp.WaitVisible(chromedp.Search(`//h1[contains(., "Pending reviews") or contains(., "Dashboard") or . = "Tools"]`)))
	}

	// A wrong key is refused on the page.
	b.do("bad sign-in", chromedp.Navigate(base+"/signin"), chromedp.WaitVisible(css("#key")),
		chromedp.SendKeys(css("#key"), "tsk_nope"), chromedp.Submit(css("#key")), chromedp.WaitVisible(css(".error")))
	b.shot("console-signin-refused")
	if text := b.text(".error"); !strings.Contains(text, "refused") {
		t.Fatalf("bad key message: %q", text)
	}

	signIn(e.admin)
	// An admin starts on the dashboard; with no data yet each chart says
	// what will fill it.
	if h1 := b.text("main h1"); h1 != "Dashboard" {
		t.Fatalf("an admin's first page: %q", h1)
	}
	b.shot("console-dashboard-empty")
	if n := eval[int](b, `document.querySelectorAll('.chart .empty').length`); n != 6 {
		t.Fatalf("an empty dashboard has %d empty charts, want 6: %s", n, b.text("main"))
	}
	if text := b.text("#ranking-models"); !strings.Contains(text, "the configured ranking") || !strings.Contains(text, "No version has been trained yet") {
		t.Fatalf("an empty dashboard's ranking models: %q", text)
	}
	b.do("reviews", chromedp.Navigate(base+"/reviews"), chromedp.WaitVisible(css("main h1")))
	b.shot("console-reviews-empty")
	// Sources: empty input is refused with a message; a real spec is added and scanned.
	b.do("empty source", chromedp.Navigate(base+"/sources"), chromedp.WaitVisible(css("#add-source")),
		chromedp.Click(css("#add-source")), chromedp.WaitVisible(css("p.error")))
	if text := b.text("p.error"); !strings.Contains(text, "URL, file or folder") {
		t.Fatalf("empty source message: %q", text)
	}
	// A location whose scan fails is reported as a failure, never as a
	// green "added and scanned".
	b.do("failed source", chromedp.Navigate(base+"/sources"), chromedp.WaitVisible(css("#add-source")),
		chromedp.SendKeys(css("#location"), "http://127.0.0.1:1/no-such-spec.yaml"), chromedp.Click(css("#add-source")), chromedp.WaitVisible(css("p.error")))
	if text := b.text("p.error"); !strings.Contains(text, "scan failed") {
		t.Fatalf("failed scan message: %q", text)
	}
	if flash := eval[string](b, `(document.querySelector('.flash') || {}).textContent || ""`); flash != "" {
		t.Fatalf("a failed scan also shows the flash %q", flash)
	}
	b.do("add source", chromedp.Navigate(base+"/sources"), chromedp.WaitVisible(css("#add-source")),
		chromedp.SendKeys(css("#location"), specs.URL+"/pets.yaml"), chromedp.Click(css("#add-source")),
		chromedp.WaitVisible(css(".flash")))
	b.shot("console-sources")

	// The review appears; its page shows operations and the approve dialog.
	reviewLink := func() string {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
			b.do("reviews", chromedp.Navigate(base+"/reviews"), chromedp.WaitVisible(css("h1")))
			if href := eval[string](b, `(document.querySelector('a[href^="/ui/reviews/airlock-"]') || {}).pathname || ""`); href != "" {
				return href
			}
			if time.Now().After(deadline) {
				t.Fatal("no pending review appeared")
			}
		}
	}
	reviewURL := reviewLink()
	b.shot("console-reviews")
	b.do("open review", chromedp.Navigate(e.api.URL+reviewURL), chromedp.WaitVisible(chromedp.Search(`//h2[contains(., "Operations")]`)))
	b.shot("console-review")

	// A user without the approver role sees the review but no approve button.
	signIn(user)
	b.do("user view", chromedp.Navigate(e.api.URL+reviewURL), chromedp.WaitVisible(css("main h1")))
	b.shot("console-review-user")
	if eval[bool](b, `!!document.querySelector('#approve-submit')`) {
		t.Fatal("a user without the approver role sees the approve button")
	}
	if text := b.text("main"); !strings.Contains(text, "Only approvers and admins") || strings.Contains(text, "Operations") {
		t.Fatalf("a user's view of a review: %q", text)
	}

	// Approve through the dialog: a bad quota first, then a real policy.
	// The page refuses a quota that is not a number before sending it; the
	// server refuses it too when the page's checks are bypassed.
	signIn(e.admin)
	b.do("open approve", chromedp.Navigate(e.api.URL+reviewURL), chromedp.WaitVisible(css("#approve summary")),
		chromedp.Click(css("#approve summary")), chromedp.WaitVisible(css("input[name=quotaPerDay]")),
		chromedp.SendKeys(css("input[name=quotaPerDay]"), "lots"))
	if eval[bool](b, `document.querySelector('input[name=quotaPerDay]').checkValidity()`) {
		t.Fatal("the page accepts a quota of \"lots\"")
	}
	b.shot("console-approve-dialog")
	b.do("bad quota", chromedp.Evaluate[chromedp.Void](`document.querySelector('#approve form').noValidate = true`),
		chromedp.Click(css("#approve-submit")), chromedp.WaitVisible(css("#approve p.error")))
	if text := b.text("#approve p.error"); !strings.Contains(text, "Quota per day") {
		t.Fatalf("bad quota message: %q", text)
	}
	if text := b.text("#approve p.error"); strings.Count(text, "Quota per day") != 1 {
		t.Fatalf("bad quota message not said once: %q", text)
	}
	// A policy only the server refuses: its message appears once, under
	// the field's name, and the form keeps what was typed.
	b.do("bad budgets", chromedp.SetValue(css("input[name=quotaPerDay]"), "100"),
		chromedp.SetValue(css("input[name=softBudget]"), "10"), chromedp.SetValue(css("input[name=hardBudget]"), "5"),
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('#approve p.error').forEach(e => e.remove())`), // wait for the new page's
		chromedp.Click(css("#approve-submit")), chromedp.WaitVisible(css("#approve p.error")))
	if text := eval[string](b, `document.querySelector('#approve').textContent`); strings.Count(text, "must not exceed hardBudget") != 1 {
		t.Fatalf("the budget message is not said once: %q", text)
	}
	if v := eval[string](b, `document.querySelector('input[name=softBudget]').value`); v != "10" {
		t.Fatalf("the form lost the soft budget: %q", v)
	}
	b.do("approve", chromedp.Evaluate[chromedp.Void](`document.querySelector('input[name=softBudget]').value = ''; document.querySelector('input[name=hardBudget]').value = ''`),
		chromedp.SetValue(css("input[name=baseUrl]"), petAPI.URL+"/v1"),
		chromedp.Click(css("#approve-submit")), chromedp.WaitVisible(css(".outcome")))
	b.shot("console-approved")
	if text := b.text(".outcome"); !strings.Contains(text, "onboarded") || !strings.Contains(text, "pet_clinic.") {
		t.Fatalf("approve outcome: %q", text)
	}
	// Post/redirect/get: the approval left the browser on the review's
	// own GET page, so a reload shows the outcome again and sends nothing
	// (a second approval would be refused as "not pending").
	if path := eval[string](b, `location.pathname`); path != reviewURL {
		t.Fatalf("after approving the browser is at %s, want %s", path, reviewURL)
	}
	b.do("reload", chromedp.Reload(), chromedp.WaitVisible(css(".outcome")))
	if errs := eval[string](b, `Array.from(document.querySelectorAll('p.error')).map(e => e.textContent).join(' | ')`); errs != "" {
		t.Fatalf("a reload after the approval shows %q", errs)
	}
	if n := eval[int](b, `performance.getEntriesByType('navigation')[0].type === 'reload' ? 1 : 0`); n != 1 {
		t.Fatal("the page was not reloaded")
	}
	// The new tools are links, and the onboarded operations are marked.
	if n := eval[int](b, `document.querySelectorAll('.outcome a[href^="/ui/tools/pet_clinic."]').length`); n == 0 {
		t.Fatal("the outcome's tool ids are not links")
	}
	if n := eval[int](b, `document.querySelectorAll('table.ops tr.onboarded a[href^="/ui/tools/pet_clinic."]').length`); n == 0 {
		t.Fatal("no onboarded operation is marked and linked")
	}
	// Nothing is clipped at 1280 px: the operations table fits its card.
	if clipped := eval[bool](b, `(() => { const s = document.querySelector('table.ops').parentElement; return s.scrollWidth > s.clientWidth + 1 })()`); clipped {
		t.Fatal("the operations table is clipped at 1280 px")
	}
	toolURL := eval[string](b, `document.querySelector('.outcome a[href^="/ui/tools/"]').pathname`)
	b.do("tool page", chromedp.Navigate(e.api.URL+toolURL), chromedp.WaitVisible(css("pre.manifest")))
	b.shot("console-tool")
	if wide := eval[bool](b, `(() => { const p = document.querySelector('pre.manifest'); return p.scrollWidth > p.clientWidth + 1 })()`); wide {
		t.Fatal("the manifest scrolls sideways")
	}
	// Tools: the catalogue pages without a search, filtered by category.
	b.do("browse", chromedp.Navigate(base+"/tools"), chromedp.WaitVisible(css("table.catalogue")))
	b.shot("console-tools-browse")
	if text := b.text("table.catalogue"); !strings.Contains(text, "pet_clinic.list_pets") {
		t.Fatalf("the catalogue lacks the new tools: %q", text)
	}
	b.do("filter", chromedp.SetValue(css(".filters input[name=category]"), "pets"), stale(), chromedp.Click(css("#filter-tools")),
		fresh("table.catalogue"))
	if cats := eval[[]string](b, `Array.from(document.querySelectorAll('table.catalogue tbody tr td:nth-child(3)')).map(td => td.textContent)`); len(cats) != 2 || slices.ContainsFunc(cats, func(c string) bool { return c != "pets" }) {
		t.Fatalf("category filter: %v", cats)
	}
	b.do("filter to nothing", chromedp.Navigate(base+"/tools?category=no-such-category"), chromedp.WaitVisible(css("main .empty")))
	if text := b.text("main .empty"); !strings.Contains(text, "Clear the filters") {
		t.Fatalf("empty filter: %q", text)
	}
	// An unknown review says so, and what to do next, without an empty page under it.
	b.do("unknown review", chromedp.Navigate(base+"/reviews/airlock-0000000000000000"), chromedp.WaitVisible(css("main h1")))
	if h1, ops := b.text("main h1"), eval[bool](b, `!!document.querySelector('table.ops')`); h1 != "No such review" || ops {
		t.Fatalf("unknown review: %q, operations table %v", h1, ops)
	}
	// The browser's icon is there.
	if resp, err := http.Get(e.api.URL + "/favicon.ico"); err != nil || resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "image/svg") {
		t.Fatalf("favicon: %v %v", resp, err)
	}

	// The new tools are found in search, with their score bars.
	b.do("search", chromedp.Navigate(base+"/tools?q=list+the+pets+of+the+clinic"), chromedp.WaitVisible(css(".hits")))
	b.shot("console-tools")
	if bars, text := eval[int](b, `document.querySelectorAll('.hit .bar').length`), b.text(".hits"); bars == 0 || !strings.Contains(text, "pet_clinic.") {
		t.Fatalf("search: %d bars, %q", bars, text)
	}

	// The API fails its health check: its tools are disabled and a
	// notification offers admins a re-enable button.
	petAPIDown.Store(true)
	rep, err := health.CheckAll(context.Background())
	if err != nil || len(rep.Disabled) != 1 {
		t.Fatalf("health check: %+v, %v", rep, err)
	}
	a, err := e.airlockFiles.Approval(rep.Disabled[0])
	if err != nil || len(a.ToolIDs) == 0 {
		t.Fatalf("approval %s: %+v, %v", rep.Disabled[0], a, err)
	}
	status := func() string {
		t.Helper()
		tl, err := e.reg.Get(context.Background(), a.ToolIDs[0])
		if err != nil {
			t.Fatal(err)
		}
		return tl.Status
	}
	if got := status(); got != "disabled" {
		t.Fatalf("%s after a failed health check: %s", a.ToolIDs[0], got)
	}
	b.do("notifications", chromedp.Navigate(base+"/notifications"), chromedp.WaitVisible(css(".notes button")))
	b.shot("console-notifications")
	petAPIDown.Store(false)
	b.do("re-enable", chromedp.Click(css(".notes button")), chromedp.WaitVisible(css(".flash")))
	if text := b.text(".flash"); !strings.Contains(text, "pet_clinic.") {
		t.Fatalf("re-enable: %q", text)
	}
	if got := status(); got != "active" {
		t.Fatalf("%s after re-enable: %s", a.ToolIDs[0], got)
	}

	// Reject another spec with a reason (an empty reason is refused first).
	b.do("add rates", chromedp.Navigate(base+"/sources"), chromedp.WaitVisible(css("#location")),
		chromedp.SendKeys(css("#location"), rates.URL+"/rates.json"), chromedp.Click(css("#add-source")),
		chromedp.WaitVisible(css(".flash")))
	rejectURL := reviewLink()
	b.do("reject", chromedp.Navigate(e.api.URL+rejectURL), chromedp.WaitVisible(css("#reject summary")),
		chromedp.Click(css("#reject summary")), chromedp.Click(css("#reject-submit")),
		chromedp.WaitVisible(css("#reject p.error")),
		chromedp.SendKeys(css("#reason"), "rates must come from the treasury"), chromedp.Click(css("#reject-submit")),
		chromedp.WaitVisible(css(".outcome")))
	if path := eval[string](b, `location.pathname`); path != rejectURL {
		t.Fatalf("after rejecting the browser is at %s, want %s", path, rejectURL)
	}
	b.shot("console-rejected")
	if text := b.text(".outcome"); !strings.Contains(text, "rejected") {
		t.Fatalf("reject outcome: %q", text)
	}

	// Decided reviews: each with its decision, who, when and why; a
	// review's timeline shows its scan, the decision and the build.
	b.do("decided", chromedp.Navigate(base+"/decided"), chromedp.WaitVisible(css("table.decided")))
	b.shot("console-decided")
	if text := b.text("table.decided"); !strings.Contains(text, "onboarded") || !strings.Contains(text, "rejected") ||
		!strings.Contains(text, "rates must come from the treasury") || !strings.Contains(text, "e2e admin") || !strings.Contains(text, "pet_clinic.list_pets") {
		t.Fatalf("decided reviews: %q", text)
	}
	b.do("timeline", chromedp.Navigate(e.api.URL+reviewURL), chromedp.WaitVisible(css("ol.timeline")))
	b.shot("console-review-timeline")
	if kinds := eval[[]string](b, `Array.from(document.querySelectorAll('ol.timeline li')).map(li => li.className)`); !slices.Contains(kinds, "tl-scan") ||
		!slices.Contains(kinds, "tl-decision") || !slices.Contains(kinds, "tl-build") || !slices.Contains(kinds, "tl-ended") {
		t.Fatalf("timeline steps: %v\n%s", kinds, b.text("ol.timeline"))
	}
	if text := b.text("ol.timeline li.tl-decision"); !strings.Contains(text, "approved by") || !strings.Contains(text, "e2e admin") {
		t.Fatalf("timeline decision: %q", text)
	}

	// Keys (admins): create one, its secret shown once with a copy
	// button; a level above one's own is refused as the API refuses it;
	// revoke it.
	b.do("keys", chromedp.Navigate(base+"/keys"), chromedp.WaitVisible(css("#create summary")),
		chromedp.Click(css("#create summary")), chromedp.SendKeys(css("input[name=owner]"), "bo"),
		chromedp.SetValue(css("select[name=level]"), "owner"), chromedp.Click(css("#create-key")), chromedp.WaitVisible(css("#create p.error")))
	if text := b.text("#create p.error"); !strings.Contains(text, "may not create an owner key") {
		t.Fatalf("an admin creating an owner key: %q", text)
	}
	b.do("create key", chromedp.SetValue(css("select[name=level]"), "user"), chromedp.SetValue(css("input[name=roles]"), "approver"),
		chromedp.Click(css("#create-key")), chromedp.WaitVisible(css("#secret")), chromedp.WaitVisible(css("button[data-copy]")))
	b.shot("console-key-created")
	secret := eval[string](b, `document.querySelector('#secret').value`)
	if !strings.HasPrefix(secret, "tsk_k") {
		t.Fatalf("secret %q", secret)
	}
	keyID := strings.Split(secret, "_")[1]
	b.do("reload keys", chromedp.Reload(), chromedp.WaitVisible(css("table.keys")))
	if eval[bool](b, `!!document.querySelector('#secret')`) || strings.Contains(b.text("main"), secret) {
		t.Fatal("the secret is shown again after a reload")
	}
	if text := b.text("#key-" + keyID); !strings.Contains(text, "bo") || !strings.Contains(text, "approver") || !strings.Contains(text, "active") {
		t.Fatalf("the new key's row: %q", text)
	}
	// The new approver key signs in, sees reviews but neither keys nor the audit log.
	signIn(secret)
	if eval[bool](b, `!!document.querySelector('nav a[href="/ui/keys"]')`) {
		t.Fatal("an approver sees the Keys section")
	}
	if h1 := b.text("main h1"); h1 != "Pending reviews" {
		t.Fatalf("an approver's first page: %q", h1)
	}
	b.do("approver decided", chromedp.Navigate(base+"/decided"), chromedp.WaitVisible(css("table.decided")))
	b.do("approver dashboard", chromedp.Navigate(base+"/dashboard"), chromedp.WaitVisible(css("main h1")))
	b.shot("console-dashboard-approver")
	if text := b.text("main"); !strings.Contains(text, "for admins") || eval[bool](b, `!!document.querySelector('.chart')`) {
		t.Fatalf("an approver's dashboard: %q", text)
	}
	b.do("approver keys", chromedp.Navigate(base+"/keys"), chromedp.WaitVisible(css("main h1")))
	if text := b.text("main"); !strings.Contains(text, "Only admins") || strings.Contains(text, "Create a key") {
		t.Fatalf("an approver's keys page: %q", text)
	}
	b.do("approver audit", chromedp.Navigate(base+"/audit"), chromedp.WaitVisible(css("main h1")))
	if text := b.text("main"); !strings.Contains(text, "Only admins") || eval[bool](b, `!!document.querySelector('table.audit')`) {
		t.Fatalf("an approver's audit page: %q", text)
	}
	signIn(e.admin)
	b.do("revoke", chromedp.Navigate(base+"/keys"), chromedp.WaitVisible(css("#key-"+keyID+" button")),
		chromedp.Click(css("#key-"+keyID+" button")), chromedp.WaitVisible(css(".flash")))
	if text := b.text("#key-" + keyID); !strings.Contains(text, "revoked") {
		t.Fatalf("the revoked key's row: %q", text)
	}
	b.shot("console-keys")
	// Audit: the approval is there, filtered by action, linked to its review.
	b.do("audit", chromedp.Navigate(base+"/audit"), chromedp.WaitVisible(css("table.audit")))
	b.do("audit filter", chromedp.SendKeys(css("input[name=action]"), "tools.pending.approve"), stale(), chromedp.Click(css("#filter-audit")),
		fresh(`table.audit a[href^="/ui/reviews/airlock-"]`))
	b.shot("console-audit")
	if actions := eval[[]string](b, `Array.from(document.querySelectorAll('table.audit tbody td:nth-child(3)')).map(td => td.textContent)`); len(actions) == 0 || slices.ContainsFunc(actions, func(a string) bool { return a != "tools.pending.approve" }) {
		t.Fatalf("audit filtered by action: %v", actions)
	}
	b.do("audit link", chromedp.Click(css(`table.audit a[href^="/ui/reviews/airlock-"]`)), chromedp.WaitVisible(css(".outcome")))
	b.do("audit by time", chromedp.Navigate(base+"/audit?until=2000-01-01T00:00"), chromedp.WaitVisible(css("main .empty")))
	if text := b.text("main .empty"); !strings.Contains(text, "Clear the filters") {
		t.Fatalf("audit before 2000: %q", text)
	}

	// A form with a stale token is refused with a clear message.
	b.do("stale token", chromedp.Navigate(base+"/sources"), chromedp.WaitVisible(css("#location")),
		chromedp.SetAttributeValue(css("form.inline input[name=csrf]"), "value", "stale"),
		chromedp.SendKeys(css("#location"), "https://example.invalid/x.yaml"), chromedp.Click(css("#add-source")),
		chromedp.WaitVisible(css("p.error")))
	if text := b.text("p.error"); !strings.Contains(text, "expired") {
		t.Fatalf("stale token message: %q", text)
	}
	// Runs: a planner's verb shows with its branch, linked to its Temporal
	// UI page; a verb nothing fulfils shows as a gap.
	var run verbRun
	if code := e.post("/api/v1/verbs?wait=30s", convertBody, &run); code != http.StatusOK {
		t.Fatalf("convert: HTTP %d", code)
	}
	if code := e.post("/api/v1/verbs?wait=30s", map[string]any{"verb": "CARVE_PUMPKIN", "description": "carve a pumpkin"}, &run); code != http.StatusOK || run.Result.GapRecorded == "" {
		t.Fatalf("carve: HTTP %d %+v", code, run.Result)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		b.do("runs", chromedp.Navigate(base+"/gaps"), chromedp.WaitVisible(css("main h1")))
		if eval[bool](b, `!!document.querySelector('table.runs a[href^="http://temporal-ui.invalid/namespaces/"]')`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no linked run on the runs page: %s", b.text("main"))
		}
	}
	b.shot("console-runs")
	if text := b.text("table.runs"); !strings.Contains(text, "CONVERT_CURRENCY") || !strings.Contains(text, "substitute") {
		t.Fatalf("runs table: %q", text)
	}
	if text := b.text("table.gaps"); !strings.Contains(text, "CARVE_PUMPKIN") {
		t.Fatalf("gaps table: %q", text)
	}
	// The dashboard with data: searches and their latency, the
	// fulfilments by branch and outcome, the open gaps, each chart with a
	// text alternative and its table.
	if err := sampler.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A ranking model version the gate kept out, with its figures.
	v, err := models.Train(context.Background(), retrain.Options{Epochs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := models.Evaluate(context.Background(), v.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := models.Conclude(context.Background(), v.ID, false, "no better by the margin", retrain.Gate{}); err != nil {
		t.Fatal(err)
	}
	b.do("dashboard", chromedp.Navigate(base+"/dashboard"), chromedp.WaitVisible(css("#searches svg")))
	if text := b.text("#ranking-models"); !strings.Contains(text, v.ID) || !strings.Contains(text, "rejected") || !strings.Contains(text, "no better by the margin") {
		t.Fatalf("the dashboard's ranking models: %q", text)
	}
	b.shot("console-dashboard")
	for _, id := range []string{"searches", "latency", "fulfil-hour", "fulfil-day", "gaps"} {
		if !eval[bool](b, `(() => { const s = document.querySelector('#`+id+` svg[role=img]'); return !!s && !!s.querySelector('title') && !!s.querySelector('desc') && document.querySelectorAll('#`+id+` details tbody tr').length > 0 })()`) {
			t.Fatalf("chart %s lacks its drawing, text alternative or table: %s", id, b.text("#"+id))
		}
	}
	if text := eval[string](b, `document.querySelector('#fulfil-hour details').textContent`); !strings.Contains(text, "substitute · completed") {
		t.Fatalf("fulfilments table: %q", text)
	}
	b.do("narrow window", chromedp.EmulateViewport(390, 844), chromedp.Navigate(base+"/gaps"), chromedp.WaitVisible(css("h1")))
	b.shot("console-runs-narrow")
	// Every page stays readable in a 390 px window: nothing pushes the
	// page wider than the window (wide tables scroll inside their card).
	for _, page := range []string{"/dashboard", "/reviews", "/decided", reviewURL[len("/ui"):], "/tools", "/tools?q=list+the+pets", toolURL[len("/ui"):],
		"/sources", "/notifications", "/keys", "/audit"} {
		b.do("narrow "+page, chromedp.Navigate(base+page), chromedp.WaitVisible(css("main h1")))
		name := "console-narrow-" + strings.NewReplacer("/", "-", "?", "-", "=", "-", "+", "-", ".", "-").Replace(strings.Trim(page, "/"))
		if w := eval[int](b, `document.documentElement.scrollWidth`); w > 390 {
			b.shot(name)
			t.Fatalf("%s is %d px wide in a 390 px window", page, w)
		}
		b.axeCheck(name)
	}
	b.do("narrow dashboard", chromedp.Navigate(base+"/dashboard"), chromedp.WaitVisible(css("#searches svg")))
	b.shot("console-dashboard-narrow")

	// Signed out, a guest sees neither the review nor its approve button,
	// and search shows only the public tools (the pet clinic's need a user).
	b.do("sign out", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(base+"/tools"), chromedp.WaitVisible(css(".who button")),
		chromedp.Click(css(".who button")), chromedp.WaitVisible(css("#key")))
	b.do("guest review", chromedp.Navigate(e.api.URL+reviewURL), chromedp.WaitVisible(css("#key")))
	if eval[bool](b, `!!document.querySelector('#approve-submit')`) {
		t.Fatal("a guest sees the approve button")
	}
	b.do("guest search", chromedp.Navigate(base+"/tools?q=list+the+pets+of+the+clinic"), chromedp.WaitVisible(css("main h1")))
	b.shot("console-tools-guest")
	if text := b.text("main"); strings.Contains(text, "pet_clinic.") {
		t.Fatalf("a guest finds the clinic's tools: %q", text)
	}
	for _, page := range []string{"/dashboard", "/keys", "/audit", "/decided"} {
		b.do("guest "+page, chromedp.Navigate(base+page), chromedp.WaitVisible(css("#key")))
		if eval[bool](b, `!!document.querySelector('.chart, table')`) {
			t.Fatalf("a guest sees %s", page)
		}
	}
	b.do("guest browse", chromedp.Navigate(base+"/tools"), chromedp.WaitVisible(css("main h2")))
	if text := b.text("main"); strings.Contains(text, "pet_clinic.") {
		t.Fatalf("a guest browses the clinic's tools: %q", text)
	}
}
