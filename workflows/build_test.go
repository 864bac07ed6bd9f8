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
