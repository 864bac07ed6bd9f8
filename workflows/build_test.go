package workflows

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/build"
	"github.com/toolsmith/toolsmith/codegen"
)

type noUpdateCallbacks struct{ err error }

func (c *noUpdateCallbacks) Accept()             {}
func (c *noUpdateCallbacks) Reject(err error)    { c.err = err }
func (c *noUpdateCallbacks) Complete(any, error) {}

// TestBuildRoundsAndRejection: each round's problem goes back to the
// model; the passing program parks for review; a rejection ends the build
// with the reviewer's reason, noted on the gap, and a second decision is
// refused.
func TestBuildRoundsAndRejection(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(30 * time.Second)
	env.RegisterWorkflow(BuildToolWorkflow)
	env.RegisterActivity(&activities.Build{})
	var a *activities.Build
	prog := func(src string) activities.WriteProgramOutput {
		return activities.WriteProgramOutput{Program: build.Program{Tool: "to_roman", Source: src}, Tokens: 500, Budget: 4000, Model: "m", PromptVersion: build.PromptVersion}
	}
	env.OnActivity(a.WriteProgram, mock.Anything, mock.MatchedBy(func(in activities.WriteProgramInput) bool { return in.Previous == nil })).
		Return(prog("v1"), nil).Once()
	env.OnActivity(a.WriteProgram, mock.Anything, mock.MatchedBy(func(in activities.WriteProgramInput) bool {
		return in.Previous != nil && in.Previous.Source == "v1" && strings.Contains(in.Previous.Problem, "undefined: numeral") && in.TokensUsed == 500
	})).Return(prog("v2"), nil).Once()
	env.OnActivity(a.WriteProgram, mock.Anything, mock.MatchedBy(func(in activities.WriteProgramInput) bool {
		return in.Previous != nil && in.Previous.Source == "v2" && strings.Contains(in.Previous.Problem, "TestCases/four")
	})).Return(prog("v3"), nil).Once()
	env.OnActivity(a.TestProgram, mock.Anything, mock.MatchedBy(func(in activities.TestProgramInput) bool { return in.Program.Source == "v1" })).
		Return(build.Report{Output: "./tool.go:12:3: undefined: numeral"}, nil)
	env.OnActivity(a.TestProgram, mock.Anything, mock.MatchedBy(func(in activities.TestProgramInput) bool { return in.Program.Source == "v2" })).
		Return(build.Report{Built: true, Tests: []codegen.TestOutcome{{Name: "TestCases/four", Result: "FAIL"}}, Output: "got IIII"}, nil)
	env.OnActivity(a.TestProgram, mock.Anything, mock.MatchedBy(func(in activities.TestProgramInput) bool { return in.Program.Source == "v3" })).
		Return(build.Report{Built: true, Passed: true, Tests: []codegen.TestOutcome{{Name: "TestCases/four", Result: "PASS"}}}, nil)
	env.OnActivity(a.NoteGap, mock.Anything, mock.MatchedBy(func(in activities.NoteGapInput) bool {
		return in.Verb == "ROMAN_NUMERAL" && strings.Contains(in.Reason, "rejected by ana: numerals are a solved problem")
	})).Return(true, nil).Once()
	// The gap says a build is under way, then that it awaits review, not
	// what an earlier build left.
	env.OnActivity(a.NoteGap, mock.Anything, activities.NoteGapInput{Verb: "ROMAN_NUMERAL",
		Reason: "a model is building a tool for it (status: GET /api/v1/builds/default-test-workflow-id)"}).Return(true, nil).Once()
	env.OnActivity(a.NoteGap, mock.Anything, activities.NoteGapInput{Verb: "ROMAN_NUMERAL",
		Reason: "a built tool awaits review (review it at /api/v1/tools/pending/default-test-workflow-id)"}).Return(true, nil).Once()

	var second noUpdateCallbacks
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(ReviewQuery)
		if err != nil {
			t.Errorf("review query: %v", err)
			return
		}
		var st AirlockState
		if err := v.Get(&st); err != nil || st.Status != AirlockPending || st.Build == nil || st.Build.Program.Source != "v3" || len(st.Build.Rounds) != 3 {
			t.Errorf("review before the decision: %+v %v", st, err)
		}
		env.UpdateWorkflow(UpdateDecide, "r1", &noUpdateCallbacks{}, Decision{Reject: &RejectSignal{Reviewer: "ana", Reason: "numerals are a solved problem"}})
		env.UpdateWorkflow(UpdateDecide, "r2", &second, Decision{Reject: &RejectSignal{Reviewer: "bo", Reason: "again"}})
	}, time.Minute)
	env.ExecuteWorkflow(BuildToolWorkflow, BuildInput{Verb: "ROMAN_NUMERAL"})
	var res BuildResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Status != BuildRejected || res.Rounds != 3 || res.Tokens != 1500 || res.Reviewer != "ana" {
		t.Fatalf("result: %+v", res)
	}
	if second.err == nil || !strings.Contains(second.err.Error(), "not pending") {
		t.Fatalf("second decision: %v", second.err)
	}
	env.AssertExpectations(t)
}

// TestBuildGivesUpAfterTheRounds: three failing rounds end the build with
// the last problem, noted on the gap; nothing parks for review.
func TestBuildGivesUpAfterTheRounds(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(BuildToolWorkflow)
	env.RegisterActivity(&activities.Build{})
	var a *activities.Build
	env.OnActivity(a.WriteProgram, mock.Anything, mock.Anything).Return(activities.WriteProgramOutput{Invalid: "build: the model's answer is not a program: prose"}, nil).Times(2)
	env.OnActivity(a.NoteGap, mock.Anything, mock.MatchedBy(func(in activities.NoteGapInput) bool {
		return strings.Contains(in.Reason, "no program passed in 2 rounds") && strings.Contains(in.Reason, "not a program")
	})).Return(true, nil).Once()
	env.ExecuteWorkflow(BuildToolWorkflow, BuildInput{Verb: "ROMAN_NUMERAL", Options: BuildOptions{Rounds: 2}})
	var res BuildResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Status != BuildFailed || res.Rounds != 2 {
		t.Fatalf("result: %+v", res)
	}
	env.AssertExpectations(t)
}

// TestBuildRefusesADecisionWhileWriting: a decision sent while the model
// is still writing is refused as not pending (ReviewDecided, a 409 at the
// API), not left as an update the build does not know.
func TestBuildRefusesADecisionWhileWriting(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(30 * time.Second)
	env.RegisterWorkflow(BuildToolWorkflow)
	env.RegisterActivity(&activities.Build{})
	var a *activities.Build
	env.OnActivity(a.WriteProgram, mock.Anything, mock.Anything).After(time.Hour).
		Return(activities.WriteProgramOutput{Invalid: "build: the model's answer is not a program: prose"}, nil).Once()
	env.OnActivity(a.NoteGap, mock.Anything, mock.Anything).Return(true, nil).Times(2) // the start, the end
	var early noUpdateCallbacks
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(UpdateDecide, "early", &early, Decision{Reject: &RejectSignal{Reviewer: "ana", Reason: "too soon"}})
	}, time.Second)
	env.ExecuteWorkflow(BuildToolWorkflow, BuildInput{Verb: "ROMAN_NUMERAL", Options: BuildOptions{Rounds: 1}})
	var res BuildResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if activities.ErrorType(early.err) != ErrTypeReviewDecided || !strings.Contains(early.err.Error(), "still writing") {
		t.Fatalf("decision while writing: %v", early.err)
	}
	if res.Status != BuildFailed || res.Reviewer != "" {
		t.Fatalf("result: %+v", res)
	}
	env.AssertExpectations(t)
}

// TestBuildBudgetSpentIsARound: an answer that spends the token budget is
// recorded as a round (stage budget) with what it cost and the model.
func TestBuildBudgetSpentIsARound(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(BuildToolWorkflow)
	env.RegisterActivity(&activities.Build{})
	var a *activities.Build
	spent := activities.WriteProgramOutput{Tokens: 90100, Budget: 40000, Model: "openai/m", PromptVersion: build.PromptVersion}
	env.OnActivity(a.WriteProgram, mock.Anything, mock.Anything).
		Return(activities.WriteProgramOutput{}, activities.FailWithDetails(activities.ErrTypeBuildBudget, spent,
			"the build's token budget of 40000 is spent: 0 used before, and this answer cost 90100")).Once()
	env.OnActivity(a.NoteGap, mock.Anything, mock.Anything).Return(true, nil).Times(2) // the start, the end
	env.ExecuteWorkflow(BuildToolWorkflow, BuildInput{Verb: "ROMAN_NUMERAL"})
	var res BuildResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Status != BuildFailed || res.Rounds != 1 || res.Tokens != 90100 {
		t.Fatalf("result: %+v", res)
	}
	v, err := env.QueryWorkflow(BuildQuery)
	if err != nil {
		t.Fatal(err)
	}
	var st BuildState
	if err := v.Get(&st); err != nil {
		t.Fatal(err)
	}
	if st.Model != "openai/m" || st.TokensUsed != 90100 || st.TokenBudget != 40000 || len(st.Rounds) != 1 ||
		st.Rounds[0].Stage != StageBudget || st.Rounds[0].Tokens != 90100 || !strings.Contains(st.Rounds[0].Summary, "cost 90100") {
		t.Fatalf("state: %+v", st)
	}
}

// TestBuildWithoutAModelSaysSoOnce: the gap's reason names the missing
// model once, without sentinel text.
func TestBuildWithoutAModelSaysSoOnce(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(BuildToolWorkflow)
	env.RegisterActivity(&activities.Build{}) // no model: the real activity answers
	want := ReasonNeedsModel + ": " + build.NoModelHint
	var a *activities.Build
	env.OnActivity(a.NoteGap, mock.Anything, activities.NoteGapInput{Verb: "ROMAN_NUMERAL", Reason: want}).Return(true, nil).Once()
	env.ExecuteWorkflow(BuildToolWorkflow, BuildInput{Verb: "ROMAN_NUMERAL"})
	var res BuildResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Status != BuildNeedsModel || res.Reason != want {
		t.Fatalf("result %+v, want the reason %q", res, want)
	}
	env.AssertExpectations(t)
}
