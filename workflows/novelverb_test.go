package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/modules"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/tool"
	"github.com/toolsmith/toolsmith/workflows/workflowstest"
)

// run executes NovelVerbWorkflow in the SDK test environment with the real
// activity structs over the fixture, and returns the result, the final
// progress and the error.
func run(t *testing.T, f *workflowstest.Fixture, in NovelVerbInput) (NovelVerbResult, Progress, error) {
	t.Helper()
	return runWith(t, f, in, nil)
}

// runWith is run with setup applied to the test environment first (to
// mock a workflow version, say).
func runWith(t *testing.T, f *workflowstest.Fixture, in NovelVerbInput, setup func(*testsuite.TestWorkflowEnvironment)) (NovelVerbResult, Progress, error) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	if setup != nil {
		setup(env)
	}
	env.SetTestTimeout(30 * time.Second)
	env.RegisterWorkflow(NovelVerbWorkflow)
	env.RegisterActivity(&activities.Graph{Searcher: f.Searcher, Gaps: f.Gaps, Routed: f.Routed, Schemas: f})
	env.RegisterActivity(&activities.Modules{Router: f.Router, Schemas: f, Usage: f.Usage, Pairs: f.Usage})
	env.RegisterActivity(&activities.LLM{Model: f.LLM})
	// No airlock configured: find-or-build finds no external definition.
	env.RegisterActivity(&activities.Airlock{})
	// A build started for a gap runs on its own (build_test.go tests it).
	env.RegisterWorkflow(BuildToolWorkflow)
	env.OnWorkflow(BuildToolWorkflow, mock.Anything, mock.Anything).Return(BuildResult{Status: BuildPending}, nil)
	env.ExecuteWorkflow(NovelVerbWorkflow, in)
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	var p Progress
	if v, err := env.QueryWorkflow(ProgressQuery); err != nil {
		t.Fatalf("progress query: %v", err)
	} else if err := v.Get(&p); err != nil {
		t.Fatalf("progress decode: %v", err)
	}
	err := env.GetWorkflowError()
	var res NovelVerbResult
	if err == nil {
		if gerr := env.GetWorkflowResult(&res); gerr != nil {
			t.Fatalf("result: %v", gerr)
		}
		return res, p, nil
	}
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.HasDetails() {
		if derr := appErr.Details(&res); derr != nil {
			t.Fatalf("failure details: %v", derr)
		}
	}
	return res, p, err
}

func wantType(t *testing.T, err error, typ string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want a %s failure, got success", typ)
	}
	t.Logf("%s: %s", typ, activities.Message(err))
	if got := activities.ErrorType(err); got != typ {
		t.Fatalf("error type = %q, want %q (err: %v)", got, typ, err)
	}
}

func eurInputs() map[string]any { return map[string]any{"amount": 100, "from": "USD", "to": "EUR"} }

func TestSubstitute(t *testing.T) {
	f := workflowstest.New(t, nil)
	// Hybrid scores on the ranking's scale: a clear lead, as the demo
	// catalogue gives CONVERT_CURRENCY.
	f.RankedHit("convert currency", "currency.convert", retrieval.Candidate{Similarity: 0.82, Score: 13.3, Keyword: 3})
	f.RankedHit("convert currency", "units.convert", retrieval.Candidate{Similarity: 0.41, Score: 6.7, Keyword: -0.5})
	res, p, err := run(t, f, NovelVerbInput{Verb: "CONVERT_CURRENCY", Description: "change money", Inputs: eurInputs(), Caller: Caller{UserID: "ana", Level: "user"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Branch != BranchSubstitute || len(res.Tools) != 1 || res.Tools[0] != "currency.convert" {
		t.Fatalf("branch %q tools %v, want substitute via currency.convert", res.Branch, res.Tools)
	}
	out, _ := res.Output.(map[string]any)
	if out["converted"] != 92.14 || out["rate"] != 0.9214 {
		t.Fatalf("output = %v, want the demo module's conversion (92.14 at 0.9214)", res.Output)
	}
	if len(res.Scores) != 2 || res.Scores[0].Similarity != 0.82 {
		t.Fatalf("scores = %+v", res.Scores)
	}
	if n := f.Mods["currency"].Executions(""); n != 1 {
		t.Fatalf("module executions = %d, want 1", n)
	}
	if p.Status != StatusCompleted || p.Stage != BranchSubstitute {
		t.Fatalf("progress = %+v", p)
	}
	calls := f.Mods["currency"].Calls()
	if !strings.Contains(calls[0].IdempotencyKey, "/") {
		t.Fatalf("idempotency key %q is not workflowID/activityID", calls[0].IdempotencyKey)
	}
	// The substitute served the verb: its usage carries the verb's words.
	if ev := f.Usage.Events; len(ev) != 1 || ev[0].ToolID != "currency.convert" || ev[0].Query != activities.VerbQuery("CONVERT_CURRENCY", "change money") || !ev[0].Success || len(f.Usage.Pairs) != 0 {
		t.Fatalf("usage = %+v, pairs %+v; want one success serving the verb, no pairs", ev, f.Usage.Pairs)
	}
}

// TestGuestSubstitutionTeachesNoSearch: a guest's or an anonymous
// caller's substitution runs and counts as a use, but its use is recorded
// without the verb's text (a guest key is anyone's, and a guest's report
// may not teach either; access.MayTeach), and the reason says so. A run
// started before workflow change "guest-teaches-nothing" replays as it
// ran.
func TestGuestSubstitutionTeachesNoSearch(t *testing.T) {
	search := func() *workflowstest.Fixture {
		f := workflowstest.New(t, nil)
		f.RankedHit("convert currency", "currency.convert", retrieval.Candidate{Similarity: 0.82, Score: 13.3, Keyword: 3})
		f.RankedHit("convert currency", "units.convert", retrieval.Candidate{Similarity: 0.41, Score: 6.7, Keyword: -0.5})
		return f
	}
	for _, caller := range []Caller{{UserID: "key:g", Level: "guest"}, {}} {
		f := search()
		res, _, err := run(t, f, NovelVerbInput{Verb: "CONVERT_CURRENCY", Description: "change money", Inputs: eurInputs(), Caller: caller})
		if err != nil || res.Branch != BranchSubstitute {
			t.Fatalf("caller %+v: branch %q (%s) %v, want a substitution", caller, res.Branch, res.Reason, err)
		}
		if ev := f.Usage.Events; len(ev) != 1 || ev[0].Query != "" || !ev[0].Success || !strings.Contains(res.Reason, "guest's use teaches no search") {
			t.Fatalf("caller %+v: usage %+v, reason %q: want one use without the verb's text, said so", caller, ev, res.Reason)
		}
	}
	f := search()
	res, _, _ := runWith(t, f, NovelVerbInput{Verb: "CONVERT_CURRENCY", Description: "change money", Inputs: eurInputs()}, func(env *testsuite.TestWorkflowEnvironment) {
		env.OnGetVersion("guest-teaches-nothing", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	})
	if ev := f.Usage.Events; len(ev) != 1 || ev[0].Query != activities.VerbQuery("CONVERT_CURRENCY", "change money") || strings.Contains(res.Reason, "teaches no search") {
		t.Fatalf("replayed before the change: usage %+v, reason %q; want the verb's text passed on", ev, res.Reason)
	}
}

func TestSubstituteMapsInputNamesCaseInsensitively(t *testing.T) {
	f := workflowstest.New(t, nil)
	f.ClearHit("convert currency", "currency.convert")
	res, _, err := run(t, f, NovelVerbInput{Verb: "convert currency", Inputs: map[string]any{"AMOUNT": 10, "From": "GBP", "to": "USD"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Renamed["amount"] != "AMOUNT" || res.Renamed["from"] != "From" {
		t.Fatalf("renamed = %v", res.Renamed)
	}
	if res.Verb != "CONVERT_CURRENCY" {
		t.Fatalf("verb not normalized: %q", res.Verb)
	}
}

func TestSchemaMismatch(t *testing.T) {
	cases := []struct {
		name   string
		inputs map[string]any
		want   string
	}{
		{"missing required", map[string]any{"amount": 5, "from": "USD"}, "inputs.to"},
		{"type mismatch", map[string]any{"amount": "five", "from": "USD", "to": "EUR"}, "/amount"},
		{"ambiguous", map[string]any{"amount": 1, "from": "USD", "To": "EUR", "TO": "GBP"}, "ambiguous"},
		{"exact and a variant", map[string]any{"amount": 1, "Amount": 500, "from": "USD", "to": "EUR"}, "ambiguous"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := workflowstest.New(t, nil)
			f.ClearHit("convert currency", "currency.convert")
			res, p, err := run(t, f, NovelVerbInput{Verb: "CONVERT_CURRENCY", Inputs: tc.inputs})
			wantType(t, err, activities.ErrTypeSchemaMismatch)
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not name %q", err, tc.want)
			}
			if res.Branch != BranchSubstitute || p.Status != StatusFailed {
				t.Fatalf("partial result branch %q, progress %+v", res.Branch, p)
			}
			if n := f.Mods["currency"].Executions(""); n != 0 {
				t.Fatalf("module called %d times on a schema mismatch", n)
			}
		})
	}
}

func TestModuleTimeout(t *testing.T) {
	f := workflowstest.New(t, func(c *modules.Config) { c.DefaultTimeout = 50 * time.Millisecond })
	f.Mods["currency"].SetDelay(2 * time.Second)
	f.ClearHit("convert currency", "currency.convert")
	_, _, err := run(t, f, NovelVerbInput{Verb: "CONVERT_CURRENCY", Inputs: eurInputs()})
	wantType(t, err, activities.ErrTypeModuleTimeout)
	if !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("error %q lacks the timeout message", err)
	}
}

func TestModuleHTTPErrorIsNotRetriedOn4xx(t *testing.T) {
	f := workflowstest.New(t, nil)
	f.Mods["currency"].FailWith("currency.convert", 422)
	f.ClearHit("convert currency", "currency.convert")
	_, _, err := run(t, f, NovelVerbInput{Verb: "CONVERT_CURRENCY", Inputs: eurInputs()})
	wantType(t, err, activities.ErrTypeModuleRejected)
	if got := len(f.Mods["currency"].Calls()); got != 1 {
		t.Fatalf("module called %d times, want 1 (4xx is not retried)", got)
	}
}

func TestToolFailure(t *testing.T) {
	f := workflowstest.New(t, nil)
	f.ClearHit("convert currency", "currency.convert")
	_, _, err := run(t, f, NovelVerbInput{Verb: "CONVERT_CURRENCY", Inputs: map[string]any{"amount": 1, "from": "USD", "to": "XYZ"}})
	wantType(t, err, activities.ErrTypeToolFailed)
	if !strings.Contains(err.Error(), "unsupported currency") {
		t.Fatalf("error %q lacks the module's message", err)
	}
}

func TestNoLLM(t *testing.T) {
	f := workflowstest.New(t, nil)
	f.Hit("plan trip budget", "currency.convert", 0.3)
	res, p, err := run(t, f, NovelVerbInput{Verb: "PLAN_TRIP_BUDGET", Inputs: eurInputs()})
	wantType(t, err, activities.ErrTypeLLMUnavailable)
	if res.Branch != BranchDecompose || res.Plan != nil {
		t.Fatalf("partial result: branch %q plan %v; want decompose and no invented plan", res.Branch, res.Plan)
	}
	if p.Stage != BranchDecompose || p.Status != StatusFailed {
		t.Fatalf("progress = %+v", p)
	}
	// Nothing fulfilled the verb: its gap is recorded, with the closest tool.
	if res.GapRecorded != "store" || len(f.Gaps.Gaps) != 1 || f.Gaps.Gaps[0].Verb != "PLAN_TRIP_BUDGET" ||
		len(f.Gaps.Gaps[0].Closest) != 1 || f.Gaps.Gaps[0].Closest[0].ToolID != "currency.convert" {
		t.Fatalf("gap recorded %q: %+v", res.GapRecorded, f.Gaps.Gaps)
	}
	if n := f.Mods["currency"].Executions(""); n != 0 {
		t.Fatalf("module called %d times without a plan", n)
	}
}

func TestInvalidPlan(t *testing.T) {
	cases := map[string]string{
		"forward reference": `{"steps":[{"id":"a","verb":"CONVERT_CURRENCY","inputs":{"amount":"$steps.b.output.converted"}},{"id":"b","verb":"CONVERT_UNITS"}]}`,
		"duplicate ids":     `{"steps":[{"id":"a","verb":"X"},{"id":"a","verb":"Y"}]}`,
		"unknown input":     `{"steps":[{"id":"a","verb":"CONVERT_CURRENCY","inputs":{"amount":"$inputs.nope"}}]}`,
		"not json":          `I would first convert the currency.`,
		"too many steps":    `{"steps":[` + strings.TrimSuffix(strings.Repeat(`{"id":"s","verb":"X"},`, 11), ",") + `]}`,
	}
	for name, answer := range cases {
		t.Run(name, func(t *testing.T) {
			f := workflowstest.New(t, nil)
			f.LLM = &workflowstest.ScriptedLLM{Answers: map[string]string{"PLAN_TRIP": answer}}
			_, _, err := run(t, f, NovelVerbInput{Verb: "PLAN_TRIP", Inputs: map[string]any{"budget": 1}})
			wantType(t, err, activities.ErrTypeInvalidPlan)
		})
	}
}

// tripPlan decomposes PLAN_TRIP_BUDGET into a known verb, a novel verb
// (fulfilled by a child workflow) and a known verb fed by step 1's output.
const tripPlan = `Here is the plan:
` + "```json" + `
{"steps":[
 {"id":"budget","verb":"CONVERT_CURRENCY","description":"budget in euros","inputs":{"amount":"$inputs.budget","from":"$inputs.currency","to":"EUR"}},
 {"id":"distance","verb":"MEASURE_DISTANCE_IN_MILES","description":"distance in miles","inputs":{"value":"$inputs.distance_km","from_unit":"km","to_unit":"mi"}},
 {"id":"yen","verb":"CONVERT_CURRENCY","description":"euros to yen","inputs":{"amount":"$steps.budget.output.converted","from":"EUR","to":"JPY"}}
]}
` + "```"

func TestDecomposeWithNestedNovelVerb(t *testing.T) {
	f := workflowstest.New(t, nil)
	f.Hit("plan trip budget", "currency.convert", 0.35)
	f.ClearHit("measure distance in miles", "units.convert")
	llm := &workflowstest.ScriptedLLM{Answers: map[string]string{"PLAN_TRIP_BUDGET": tripPlan}}
	f.LLM = llm
	res, p, err := run(t, f, NovelVerbInput{Verb: "PLAN_TRIP_BUDGET", Inputs: map[string]any{"budget": 1000, "currency": "USD", "distance_km": 42.195},
		Caller: Caller{UserID: "ana", Level: "user"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Branch != BranchDecompose || len(res.Steps) != 3 {
		t.Fatalf("branch %q steps %d", res.Branch, len(res.Steps))
	}
	if s := res.Steps[1]; s.Kind != StepNovel || s.ChildBranch != BranchSubstitute || !strings.HasSuffix(s.ChildID, "/distance") {
		t.Fatalf("step 2 = %+v, want a novel step fulfilled by a child's substitution", s)
	}
	if miles := res.Steps[1].Output.(map[string]any)["value"]; miles != 26.219 {
		t.Fatalf("miles = %v", miles)
	}
	// 1000 USD → 921.4 EUR → 921.4/0.9214*151.98 JPY = 151980 JPY.
	if s := res.Steps[2]; s.Inputs["amount"] != 921.4 || s.Output.(map[string]any)["converted"] != 151980.0 {
		t.Fatalf("step 3 inputs %v output %v: step 1's output did not feed step 3", s.Inputs, s.Output)
	}
	want := []string{"currency.convert", "units.convert", "currency.convert"}
	if strings.Join(res.Tools, ",") != strings.Join(want, ",") {
		t.Fatalf("tools = %v, want %v", res.Tools, want)
	}
	if f.Mods["currency"].Executions("") != 2 || f.Mods["units"].Executions("") != 1 {
		t.Fatalf("module executions: currency %d units %d", f.Mods["currency"].Executions(""), f.Mods["units"].Executions(""))
	}
	if len(llm.Asked) != 1 {
		t.Fatalf("LLM asked for %v; the child substitutes without the LLM", llm.Asked)
	}
	if p.StepsDone != 3 || p.StepsTotal != 3 || p.Status != StatusCompleted {
		t.Fatalf("progress = %+v", p)
	}
	// Each step's tool served the step's verb (the child's too), and the
	// plan's tools were used together: the last step pairs with the first
	// two (currency.convert once, with units.convert).
	var served []string
	for _, e := range f.Usage.Events {
		served = append(served, e.ToolID+" <- "+e.Query)
	}
	wantServed := []string{
		"currency.convert <- " + activities.VerbQuery("CONVERT_CURRENCY", "budget in euros"),
		"units.convert <- " + activities.VerbQuery("MEASURE_DISTANCE_IN_MILES", "distance in miles"),
		"currency.convert <- " + activities.VerbQuery("CONVERT_CURRENCY", "euros to yen"),
	}
	if strings.Join(served, "\n") != strings.Join(wantServed, "\n") {
		t.Fatalf("usage recorded:\n%s\nwant:\n%s", strings.Join(served, "\n"), strings.Join(wantServed, "\n"))
	}
	// (A plan pairs its tools only for a signed-in caller who may teach
	// the shared learned data, as ana, level user.)
	if len(f.Usage.Pairs) != 1 || f.Usage.Pairs[0].A != "currency.convert" || f.Usage.Pairs[0].B != "units.convert" || f.Usage.Pairs[0].Caller != "ana" {
		t.Fatalf("plan pairings = %+v, want currency.convert with units.convert once, ana's", f.Usage.Pairs)
	}
}

func novelStep(verb string) string {
	return `{"steps":[{"id":"next","verb":"` + verb + `","inputs":{"x":"$inputs.x"}}]}`
}

func TestDepthLimit(t *testing.T) {
	f := workflowstest.New(t, nil)
	f.LLM = &workflowstest.ScriptedLLM{Answers: map[string]string{
		"LEVEL_ZERO": novelStep("LEVEL_ONE"), "LEVEL_ONE": novelStep("LEVEL_TWO"), "LEVEL_TWO": novelStep("LEVEL_THREE"),
	}}
	res, _, err := run(t, f, NovelVerbInput{Verb: "LEVEL_ZERO", Inputs: map[string]any{"x": 1}, Options: NovelVerbOptions{MaxDepth: 2}})
	wantType(t, err, activities.ErrTypeDepthLimit)
	if !strings.Contains(err.Error(), "LEVEL_THREE") {
		t.Fatalf("error %q does not name the refused verb", err)
	}
	if len(res.Steps) != 1 || res.Steps[0].ErrorType != activities.ErrTypeDepthLimit {
		t.Fatalf("top-level steps = %+v", res.Steps)
	}
}

func TestCycleGuard(t *testing.T) {
	f := workflowstest.New(t, nil)
	f.LLM = &workflowstest.ScriptedLLM{Answers: map[string]string{"PING_VERB": novelStep("PONG_VERB"), "PONG_VERB": novelStep("PING_VERB")}}
	_, _, err := run(t, f, NovelVerbInput{Verb: "PING_VERB", Inputs: map[string]any{"x": 1}})
	wantType(t, err, activities.ErrTypeCycle)
}

func TestNoCapability(t *testing.T) {
	f := workflowstest.New(t, nil)
	f.Hit("reserve lutece table", "currency.convert", 0.12)
	f.LLM = &workflowstest.ScriptedLLM{Answers: map[string]string{"RESERVE_LUTECE_TABLE": `{"steps":[],"reason":"no restaurant booking verb is known"}`}}
	res, p, err := run(t, f, NovelVerbInput{Verb: "RESERVE_LUTECE_TABLE", Description: "book dinner at Lutèce"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Branch != BranchNoCapability || res.GapRecorded != "store" || p.Stage != BranchNoCapability {
		t.Fatalf("result branch %q gap %q progress %+v", res.Branch, res.GapRecorded, p)
	}
	// A model is configured (it planned): it builds a tool for the gap.
	if res.Build == nil || !res.Build.Started || res.Build.WorkflowID != BuildWorkflowID("RESERVE_LUTECE_TABLE") || !strings.Contains(res.Reason, "building a tool") {
		t.Fatalf("build %+v reason %q", res.Build, res.Reason)
	}
	if len(f.Gaps.Gaps) != 1 || f.Gaps.Gaps[0].Verb != "RESERVE_LUTECE_TABLE" || f.Gaps.Gaps[0].BestToolID != "currency.convert" {
		t.Fatalf("gaps = %+v", f.Gaps.Gaps)
	}
}

func TestNovelStepWithoutCapabilityEndsParentCleanly(t *testing.T) {
	f := workflowstest.New(t, nil)
	f.LLM = &workflowstest.ScriptedLLM{Answers: map[string]string{
		"BOOK_TRIP":   `{"steps":[{"id":"fly","verb":"BOOK_FLIGHT"}]}`,
		"BOOK_FLIGHT": `{"steps":[],"reason":"no airline tool"}`,
	}}
	res, _, err := run(t, f, NovelVerbInput{Verb: "BOOK_TRIP"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Branch != BranchNoCapability || !strings.Contains(res.Reason, "BOOK_FLIGHT") {
		t.Fatalf("branch %q reason %q", res.Branch, res.Reason)
	}
}

func TestStateTransition(t *testing.T) {
	f := workflowstest.New(t, nil)
	// currency.convert moves the caller to "priced" and is only available in
	// the initial state; units.convert is available in both.
	f.EditTool("currency.convert", func(m *tool.Manifest) { m.State, m.AvailableInStates = "priced", []string{"undefined"} })
	f.EditTool("units.convert", func(m *tool.Manifest) { m.AvailableInStates = []string{"undefined", "priced"} })
	f.Hit("price and measure", "currency.convert", 0.3)
	f.Hit("price and measure", "units.convert", 0.2)
	f.LLM = &workflowstest.ScriptedLLM{Answers: map[string]string{"PRICE_AND_MEASURE": `{"steps":[
		{"id":"p","verb":"CONVERT_CURRENCY","inputs":{"amount":5,"from":"USD","to":"GBP"}},
		{"id":"m","verb":"CONVERT_UNITS","inputs":{"value":"$steps.p.output.converted","from_unit":"kg","to_unit":"lb"}}]}`}}
	res, _, err := run(t, f, NovelVerbInput{Verb: "PRICE_AND_MEASURE", Caller: Caller{UserID: "u1"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.State != "priced" || res.Steps[0].State != "priced" || res.Steps[1].State != "priced" {
		t.Fatalf("state = %q (steps %q, %q), want priced after currency.convert", res.State, res.Steps[0].State, res.Steps[1].State)
	}

	// In "priced", currency.convert is hidden: a plan converting twice
	// fails on its second step because the first moved the caller's state.
	f.Hit("price twice", "currency.convert", 0.3)
	f.LLM = &workflowstest.ScriptedLLM{Answers: map[string]string{"PRICE_TWICE": `{"steps":[
		{"id":"a","verb":"CONVERT_CURRENCY","inputs":{"amount":5,"from":"USD","to":"GBP"}},
		{"id":"b","verb":"CONVERT_CURRENCY","inputs":{"amount":7,"from":"USD","to":"GBP"}}]}`}}
	res, _, err = run(t, f, NovelVerbInput{Verb: "PRICE_TWICE"})
	wantType(t, err, activities.ErrTypeForbidden)
	if len(res.Steps) != 2 || res.Steps[1].ErrorType != activities.ErrTypeForbidden || res.State != "priced" {
		t.Fatalf("steps = %+v state %q", res.Steps, res.State)
	}
}

func TestDryRun(t *testing.T) {
	f := workflowstest.New(t, nil)
	f.ClearHit("convert currency", "currency.convert")
	res, _, err := run(t, f, NovelVerbInput{Verb: "CONVERT_CURRENCY", Inputs: eurInputs(), Options: NovelVerbOptions{DryRun: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.DryRun || res.Output != nil || res.Arguments["amount"] != 100.0 {
		t.Fatalf("dry run result = %+v", res)
	}
	if n := len(f.Mods["currency"].Calls()); n != 0 {
		t.Fatalf("dry run called the module %d times", n)
	}

	f.Hit("plan trip budget", "currency.convert", 0.2)
	f.LLM = &workflowstest.ScriptedLLM{Answers: map[string]string{"PLAN_TRIP_BUDGET": tripPlan}}
	res, _, err = run(t, f, NovelVerbInput{Verb: "PLAN_TRIP_BUDGET", Inputs: map[string]any{"budget": 1, "currency": "USD", "distance_km": 1}, Options: NovelVerbOptions{DryRun: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 3 || res.Steps[0].Kind != StepTool || res.Steps[1].Kind != StepNovel || res.Steps[1].ChildID != "" {
		t.Fatalf("dry-run steps = %+v", res.Steps)
	}
}

// TestDefaultRule: with no rule of its own a run decides with
// retrieval.DefaultSubstituteRule, the rule `toolsmith eval --protocol
// leave-one-out` measures: the decision model's confidence, and never a tool
// the verb's inputs cannot fill.
func TestDefaultRule(t *testing.T) {
	for _, tc := range []struct {
		name             string
		sim, lead        float64
		inputs           map[string]any
		substitute       bool
		reasonContaining string
	}{
		{"close with a clear lead", 0.8, 12, eurInputs(), true, "confidence"},
		{"far and a near tie (another tool scores alike)", 0.42, 0.1, eurInputs(), false, "confidence"},
		{"close, but the inputs do not fill its parameters", 0.8, 12, map[string]any{"text": "hello"}, false, "required parameters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := workflowstest.New(t, nil)
			conv := f.Tools["currency.convert"]
			conv.RequiredParams = []string{"amount", "from", "to"}
			f.Tools["currency.convert"] = conv
			if tc.inputs["text"] != nil {
				// units.convert's own parameters: inputs that do not fill
				// the first do not fill it either, so it is no runnable
				// second to read in its place.
				withSchemaParams(t, f, "units.convert")
			}
			f.ScoredHit("convert currency", "currency.convert", tc.sim, 10+tc.lead)
			f.ScoredHit("convert currency", "units.convert", 0.4, 10)
			res, _, err := run(t, f, NovelVerbInput{Verb: "CONVERT_CURRENCY", Inputs: tc.inputs})
			if tc.substitute {
				if err != nil || res.Branch != BranchSubstitute {
					t.Fatalf("branch %q err %v (%s), want substitute", res.Branch, err, res.Reason)
				}
			} else {
				wantType(t, err, activities.ErrTypeLLMUnavailable) // decomposition was tried
			}
			if res.Rule != substituteRule(retrieval.DefaultSubstituteRule()) {
				t.Fatalf("rule %+v, want the default rule", res.Rule)
			}
			if !strings.Contains(res.Reason, tc.reasonContaining) {
				t.Fatalf("reason %q lacks %q", res.Reason, tc.reasonContaining)
			}
		})
	}
}

func TestThresholdIsConfigurable(t *testing.T) {
	f := workflowstest.New(t, nil)
	f.Hit("convert currency", "currency.convert", 0.6)
	// Default threshold substitutes at 0.6 only if DefaultThreshold ≤ 0.6;
	// a threshold of 0.95 must send the same verb to decomposition instead.
	_, _, err := run(t, f, NovelVerbInput{Verb: "CONVERT_CURRENCY", Inputs: eurInputs(), Options: NovelVerbOptions{Threshold: 0.95}})
	wantType(t, err, activities.ErrTypeLLMUnavailable)
}

func TestInvalidVerb(t *testing.T) {
	f := workflowstest.New(t, nil)
	_, _, err := run(t, f, NovelVerbInput{Verb: "  "})
	wantType(t, err, activities.ErrTypeInvalidInput)
}

// twoAsks runs the same verb twice, one run after the other.
func twoAsks(ctx workflow.Context, in NovelVerbInput) ([]NovelVerbResult, error) {
	var out []NovelVerbResult
	for i := range 2 {
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: fmt.Sprintf("ask-%d", i)})
		var res NovelVerbResult
		if err := workflow.ExecuteChildWorkflow(cctx, NovelVerbWorkflow, in).Get(ctx, &res); err != nil {
			return out, err
		}
		out = append(out, res)
	}
	return out, nil
}

// TestNoCapabilityBuildsOnce: a second ask of a verb whose build exists
// says so in words, with the build's status URL, and no Temporal internals.
func TestNoCapabilityBuildsOnce(t *testing.T) {
	f := workflowstest.New(t, nil)
	f.Hit("reserve lutece table", "currency.convert", 0.12)
	f.LLM = &workflowstest.ScriptedLLM{Answers: map[string]string{"RESERVE_LUTECE_TABLE": `{"steps":[],"reason":"no restaurant booking verb is known"}`}}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(30 * time.Second)
	env.RegisterWorkflow(twoAsks)
	env.RegisterWorkflow(NovelVerbWorkflow)
	env.RegisterActivity(&activities.Graph{Searcher: f.Searcher, Gaps: f.Gaps})
	env.RegisterActivity(&activities.Modules{Router: f.Router, Schemas: f, Usage: f.Usage, Pairs: f.Usage})
	env.RegisterActivity(&activities.LLM{Model: f.LLM})
	env.RegisterActivity(&activities.Airlock{})
	env.RegisterWorkflow(BuildToolWorkflow)
	env.OnWorkflow(BuildToolWorkflow, mock.Anything, mock.Anything).Return(BuildResult{Status: BuildPending}, nil)
	env.ExecuteWorkflow(twoAsks, NovelVerbInput{Verb: "RESERVE_LUTECE_TABLE", Description: "book dinner at Lutèce"})
	var res []NovelVerbResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Build == nil || !res[0].Build.Started {
		t.Fatalf("first ask: %+v", res)
	}
	second := res[1]
	want := "a build for RESERVE_LUTECE_TABLE is already running or already ran (status: GET /api/v1/builds/build-RESERVE_LUTECE_TABLE"
	if second.Build == nil || second.Build.Started || !strings.HasPrefix(second.Build.Reason, want) || !strings.Contains(second.Reason, want) {
		t.Fatalf("second ask: build %+v reason %q", second.Build, second.Reason)
	}
	for _, internal := range []string{"workflowID", "runID", "EventID", "child workflow"} {
		if strings.Contains(second.Reason, internal) {
			t.Fatalf("the reason shows Temporal's internals (%s): %q", internal, second.Reason)
		}
	}
}

// TestNeedsInputs: a verb asked without inputs whose confident match has
// required parameters ends with the match named and the inputs it lacks;
// the tool does not run and no use is recorded. With inputs that miss one,
// the rule refuses the match as before.
func TestNeedsInputs(t *testing.T) {
	for _, inputs := range []map[string]any{nil, {}} {
		f := workflowstest.New(t, nil)
		conv := f.Tools["currency.convert"]
		conv.RequiredParams = []string{"amount", "from", "to"}
		f.Tools["currency.convert"] = conv
		f.ClearHit("exchange money", "currency.convert")
		res, p, err := run(t, f, NovelVerbInput{Verb: "EXCHANGE_MONEY", Description: "change my dollars", Inputs: inputs})
		if err != nil {
			t.Fatalf("inputs %v: %v (%s)", inputs, err, res.Reason)
		}
		if res.Branch != BranchNeedsInputs || res.Tool != "currency.convert" || strings.Join(res.MissingInputs, ",") != "amount,from,to" {
			t.Fatalf("inputs %v: branch %q tool %q missing %v, want needs_inputs naming currency.convert and amount, from, to", inputs, res.Branch, res.Tool, res.MissingInputs)
		}
		if len(res.Tools) != 0 || f.Mods["currency"].Executions("") != 0 || len(f.Usage.Events) != 0 {
			t.Fatalf("tools %v, executions %d, usage %+v: want nothing run or recorded", res.Tools, f.Mods["currency"].Executions(""), f.Usage.Events)
		}
		if !strings.Contains(res.Reason, "amount") || p.Status != StatusCompleted || p.Stage != BranchNeedsInputs {
			t.Fatalf("reason %q progress %+v", res.Reason, p)
		}
	}
	// A tool without required parameters runs without inputs.
	f := workflowstest.New(t, nil)
	f.ClearHit("exchange money", "currency.convert")
	if res, _, err := run(t, f, NovelVerbInput{Verb: "EXCHANGE_MONEY"}); err == nil || res.Branch != BranchSubstitute {
		t.Fatalf("branch %q err %v: want the substitution tried (the module refuses the empty inputs)", res.Branch, err)
	}
}

// TestUnavailableToolIsNotSubstituted: a confident match whose module this
// deployment does not route could not run: it is not substituted (the run
// goes on as if nothing fit), and a runnable tool behind it is judged
// without it.
func TestUnavailableToolIsNotSubstituted(t *testing.T) {
	f := workflowstest.New(t, nil)
	f.RouteOnly()
	f.AddTool(tool.Manifest{ToolID: "research.summarize_page", Verb: "SUMMARIZE_TEXT", Name: "Summarize", ShortDescription: "Summarize a page", Module: "research"})
	f.ClearHit("summarize text", "research.summarize_page")
	res, _, err := run(t, f, NovelVerbInput{Verb: "SUMMARIZE_TEXT", Inputs: map[string]any{"text": "long"}})
	wantType(t, err, activities.ErrTypeLLMUnavailable) // decomposition was tried
	if res.Branch != BranchDecompose || len(res.Tools) != 0 || !strings.Contains(res.Reason, "cannot run") {
		t.Fatalf("branch %q tools %v (%s), want no substitution of a tool this deployment cannot run", res.Branch, res.Tools, res.Reason)
	}
	// Routed, the same match substitutes (and fails on its missing module
	// only because the fixture serves none).
	f = workflowstest.New(t, nil)
	f.AddTool(tool.Manifest{ToolID: "research.summarize_page", Verb: "SUMMARIZE_TEXT", Name: "Summarize", ShortDescription: "Summarize a page", Module: "research"})
	f.ClearHit("summarize text", "research.summarize_page")
	res, _, err = run(t, f, NovelVerbInput{Verb: "SUMMARIZE_TEXT", Inputs: map[string]any{"text": "long"}})
	wantType(t, err, activities.ErrTypeUnknownModule)
	if res.Branch != BranchSubstitute || len(f.Usage.Events) != 0 {
		t.Fatalf("branch %q (%s), usage %+v: want substitute without the routing check, and no use of a tool that never ran", res.Branch, res.Reason, f.Usage.Events)
	}
}

// TestServedToolIsNotReadInPlaceOfAnUnservedMatch: a served tool the
// inputs fill is not substituted in place of a better match this
// deployment cannot run (a word count for a summary): the verb may mean
// the unserved tool, so nothing after it is read in its place, from
// workflow change "decision-unavailable-rival" 1 on; a run started before
// it replays reading the served tool as the first.
func TestServedToolIsNotReadInPlaceOfAnUnservedMatch(t *testing.T) {
	search := func() *workflowstest.Fixture {
		f := workflowstest.New(t, nil)
		f.RouteOnly()
		f.AddTool(tool.Manifest{ToolID: "research.summarize_page", Verb: "SUMMARIZE_TEXT", Name: "Summarize", ShortDescription: "Summarize a page",
			Module: "research", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)})
		for _, id := range []string{"research.summarize_page", "text.stats"} {
			t := f.Tools[id]
			t.RequiredParams = []string{"text"} // as the store lists them
			f.Tools[id] = t
		}
		const words = "summarize text"
		f.RankedHit(words, "research.summarize_page", retrieval.Candidate{Similarity: 0.7, Score: 9.8, Keyword: 2})
		f.RankedHit(words, "text.stats", retrieval.Candidate{Similarity: 0.6, Score: 8, Keyword: 1.5})
		f.RankedHit(words, "currency.rates", retrieval.Candidate{Similarity: 0.3, Score: 1})
		return f
	}
	in := NovelVerbInput{Verb: "SUMMARIZE_TEXT", Inputs: map[string]any{"text": "long"}, Options: NovelVerbOptions{DryRun: true}}
	res, _, err := run(t, search(), in)
	wantType(t, err, activities.ErrTypeLLMUnavailable) // decomposition was tried
	if res.Branch != BranchDecompose || !strings.Contains(res.Reason, retrieval.UnavailableReason) {
		t.Fatalf("branch %q tools %v (%s), want nothing read in place of the unserved match", res.Branch, res.Tools, res.Reason)
	}
	res, _, _ = runWith(t, search(), in, func(env *testsuite.TestWorkflowEnvironment) {
		env.OnGetVersion("decision-unavailable-rival", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	})
	if res.Branch != BranchSubstitute || !strings.Contains(res.Reason, "text.stats") {
		t.Fatalf("replayed before the change: branch %q (%s), want text.stats read as the first", res.Branch, res.Reason)
	}
}
