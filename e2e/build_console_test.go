package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/airlock/review"
	"github.com/toolsmith/toolsmith/api"
	"github.com/toolsmith/toolsmith/audit"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/web"
	"github.com/toolsmith/toolsmith/workflows"
)

// TestConsoleBuildReview drives the review console in headless Chromium
// over a build from scratch: the pending build is listed with the specs;
// its page shows the model, the prompt version, the hosts with their
// reasons, the code highlighted on the server, the test cases and results
// and the rounds; approving it through the same dialog registers the tool.
func TestConsoleBuildReview(t *testing.T) {
	verb := "ROMAN_NUMERAL_REVIEWED" // a verb of its own: build IDs are per verb, and the tests share one server
	if testing.Short() {
		t.Skip("builds a program")
	}
	exe := chromium(t)
	m := &buildModel{Programs: []string{roman(t, romanBroken), roman(t, romanAdditive), roman(t, romanRight)}, Tokens: 900}
	e := buildEnv(t, m, 0)
	log := audit.New(e.store)
	reviews := review.New(e.client, e.store, review.Config{TaskQueue: e.queue, Namespace: server.Namespace()})
	console := web.New(web.Deps{Sessions: e.store, Auth: &identity.Authenticator{Keys: e.keys}, Keys: e.keys, Gate: api.NewGate(nil, log, nil),
		Audit: log, Registry: e.reg, Retrieval: e.search, Store: e.store, Reviews: reviews},
		web.Config{TemporalUI: "http://temporal-ui.invalid", Namespace: server.Namespace()})
	e.handlers = []api.Handler{
		{Methods: []string{http.MethodGet}, Path: "/ui", Handler: console},
		{Methods: []string{http.MethodGet, http.MethodPost}, Path: "/ui/*path", Handler: console},
	}
	e.serve(buildFeatures(e)...)

	recordGap(t, e, verb)
	var started struct {
		ID string `json:"id"`
	}
	if code := e.post("/api/v1/gaps/"+verb+"/build", nil, &started); code != http.StatusAccepted {
		t.Fatalf("start: HTTP %d", code)
	}
	if st := waitBuild(t, e, started.ID, 4*time.Minute, workflows.BuildPending, workflows.BuildFailed); st.Status != workflows.BuildPending {
		t.Fatalf("build %s: %+v", st.Status, st.Result)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.WindowSize(1280, 800),
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	tctx, cancelT := context.WithTimeout(ctx, 4*time.Minute)
	defer cancelT()
	b := browser{t: t, ctx: tctx}
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	b.do("sign in", chromedp.Navigate(e.api.URL+"/ui/signin"), chromedp.WaitVisible(css("#key")),
		chromedp.SendKeys(css("#key"), e.admin), chromedp.Submit(css("#key")),
		chromedp.WaitVisible(chromedp.Search(`//h1[contains(., "Pending reviews") or contains(., "Dashboard")]`)))
	b.do("reviews", chromedp.Navigate(e.api.URL+"/ui/reviews"), chromedp.WaitVisible(chromedp.Search(`//a[contains(., "Built tool for `+verb+`")]`)))

	b.do("open build review", chromedp.Navigate(e.api.URL+"/ui/reviews/"+started.ID), chromedp.WaitVisible(css("pre.code .go-kw")))
	text := b.text("main")
	for _, want := range []string{"Built from scratch", "openai/build-e2e", "build-v1", "2700", "TestCases/year", "an error containing", "compile"} {
		if !strings.Contains(text, want) {
			t.Errorf("the build review lacks %q", want)
		}
	}
	if kw := eval[int](b, `document.querySelectorAll('pre.code .go-kw').length`); kw < 5 {
		t.Errorf("only %d highlighted keywords", kw)
	}
	if scripts := eval[int](b, `document.querySelectorAll('pre.code script, pre.code [style]').length`); scripts != 0 {
		t.Errorf("the highlighted code carries %d scripts or inline styles", scripts)
	}
	b.shot("console-build-review")

	b.do("approve", chromedp.Click(css("#approve summary")), chromedp.WaitVisible(css("#approve-submit")),
		chromedp.Click(css("#approve-submit")), chromedp.WaitVisible(css(".outcome")))
	if text := b.text(".outcome"); !strings.Contains(text, "onboarded") || !strings.Contains(text, activities.BuiltSlug(verb)+".to_roman") {
		t.Fatalf("approve outcome: %q", text)
	}
	b.shot("console-build-approved")
}
