package workflows

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/workflows/workflowstest"
)

// findOrBuildEnv runs NovelVerbWorkflow without a language model, with an
// external definition that matches the verb.
func findOrBuildEnv(t *testing.T, f *workflowstest.Fixture) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(30 * time.Second)
	env.RegisterWorkflow(NovelVerbWorkflow)
	env.RegisterActivity(&activities.Graph{Searcher: f.Searcher, Gaps: f.Gaps})
	env.RegisterActivity(&activities.Modules{Router: f.Router, Schemas: f})
	env.RegisterActivity(&activities.LLM{})
	env.RegisterActivity(&activities.Airlock{})
	var a *activities.Airlock
	env.OnActivity(a.FindDefinitions, mock.Anything, mock.Anything).Return([]activities.DefinitionMatch{
		{ID: "h:convert", SpecHash: testHash, Location: "https://specs.example/fx.yaml", API: "FX API", Name: "convert", Score: 0.91},
	}, nil)
	env.OnActivity(a.JoinReview, mock.Anything, mock.MatchedBy(func(in activities.JoinReviewInput) bool {
		return in.SpecHash == testHash && in.Subscriber != ""
	})).Return(AirlockWorkflowID(testHash), nil).Once()
	return env
}

func TestFindOrBuildJoinsTheAirlockAndSubstitutesOnceOnboarded(t *testing.T) {
	f := workflowstest.New(t, nil)
	env := findOrBuildEnv(t, f)
	env.RegisterDelayedCallback(func() {
		// The reviewer approved: the new tool is now in the graph.
		f.Hit("convert money", "currency.convert", 0.88)
		env.SignalWorkflow(SignalAirlockOutcome, AirlockOutcome{SpecHash: testHash, Status: AirlockOnboarded, ToolIDs: []string{"currency.convert"}})
	}, 3*time.Minute)
	env.ExecuteWorkflow(NovelVerbWorkflow, NovelVerbInput{Verb: "CONVERT_MONEY", Inputs: map[string]any{"amount": 10, "from": "USD", "to": "EUR"}})
	var res NovelVerbResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Branch != BranchSubstitute || len(res.Tools) != 1 || res.Tools[0] != "currency.convert" || res.Output == nil {
		t.Fatalf("result: branch=%s tools=%v reason=%s", res.Branch, res.Tools, res.Reason)
	}
	if res.Airlock == nil || res.Airlock.Status != AirlockOnboarded || res.Airlock.ReviewID != "airlock-0123456789abcdef" {
		t.Fatalf("airlock ref: %+v", res.Airlock)
	}
	env.AssertExpectations(t)
}

func TestFindOrBuildWaitIsBounded(t *testing.T) {
	f := workflowstest.New(t, nil)
	env := findOrBuildEnv(t, f)
	env.ExecuteWorkflow(NovelVerbWorkflow, NovelVerbInput{Verb: "CONVERT_MONEY", Options: NovelVerbOptions{AirlockWait: 20 * time.Minute}})
	var res NovelVerbResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Branch != BranchFindOrBuild || res.Airlock == nil || res.Airlock.Status != AirlockPending {
		t.Fatalf("result: %+v airlock %+v", res, res.Airlock)
	}
	if want := "no decision within 20m0s"; !strings.Contains(res.Reason, want) {
		t.Fatalf("reason %q lacks %q", res.Reason, want)
	}
}
