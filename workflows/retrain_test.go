package workflows

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/retrieval/retrain"
)

// runRetrain runs RetrainWorkflow with the evaluation answering cur and
// cand, and returns the result and the decision ConcludeCandidate got.
func runRetrain(t *testing.T, in RetrainInput, cur, cand retrain.Figures) (RetrainResult, activities.ConcludeInput) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(RetrainWorkflow)
	var a *activities.Retrain
	env.RegisterActivity(a)
	env.OnActivity(a.TrainCandidate, mock.Anything, mock.Anything).Return(activities.TrainedCandidate{ID: "rv-1", Counts: retrain.Counts{Events: 100, HeldOut: 20}}, nil).Once()
	env.OnActivity(a.EvaluateCandidate, mock.Anything, "rv-1").Return(retrain.Evaluation{ID: "rv-1", Current: cur, Candidate: cand}, nil).Once()
	var got activities.ConcludeInput
	env.OnActivity(a.ConcludeCandidate, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ConcludeInput) (string, error) {
		got = in
		if in.Promote {
			return retrain.StatusPromoted, nil
		}
		return retrain.StatusRejected, nil
	}).Once()
	env.ExecuteWorkflow(RetrainWorkflow, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var r RetrainResult
	if err := env.GetWorkflowResult(&r); err != nil {
		t.Fatal(err)
	}
	env.AssertExpectations(t)
	return r, got
}

func TestRetrainKeepsACandidateNoBetter(t *testing.T) {
	cur := retrain.Figures{R1: 0.5, R5: 0.8, MRR: 0.6, N: 40, Tools: 5}
	r, c := runRetrain(t, RetrainInput{}, cur, retrain.Figures{R1: 0.5, R5: 0.8, MRR: 0.605, N: 40, Tools: 5})
	if r.Promoted || c.Promote || r.Status != retrain.StatusRejected || r.Stage != RetrainDone || c.Gate.Margin != retrain.DefaultMargin {
		t.Fatalf("result %+v, conclude %+v", r, c)
	}
}

func TestRetrainPromotesACandidateBetterByTheMargin(t *testing.T) {
	cur := retrain.Figures{R1: 0.5, R5: 0.8, MRR: 0.6, N: 40, Tools: 5}
	r, c := runRetrain(t, RetrainInput{Gate: RetrainGate{Margin: 0.05}}, cur, retrain.Figures{R1: 0.6, R5: 0.85, MRR: 0.66, N: 40, Tools: 5, Fresh: 40})
	if !r.Promoted || !c.Promote || c.ID != "rv-1" || r.Status != retrain.StatusPromoted || *r.Candidate != (RetrainFigures{R1: 0.6, R5: 0.85, MRR: 0.66, N: 40, Tools: 5, Fresh: 40}) {
		t.Fatalf("result %+v, conclude %+v", r, c)
	}
	// The same candidate under a stricter margin stays out.
	r, c = runRetrain(t, RetrainInput{Gate: RetrainGate{Margin: 0.1}}, cur, retrain.Figures{R1: 0.6, R5: 0.85, MRR: 0.66, N: 40, Tools: 5, Fresh: 40})
	if r.Promoted || c.Promote {
		t.Fatalf("margin 0.1: result %+v", r)
	}
}

// TestRetrainKeepsACandidateThatRunsMoreWrongTools: a candidate whose
// ranking is better but whose decision (its search and its record) would
// run a wrong tool for more of the held-out queries stays out.
func TestRetrainKeepsACandidateThatRunsMoreWrongTools(t *testing.T) {
	cur := retrain.Figures{R1: 0.5, R5: 0.8, MRR: 0.6, N: 40, Tools: 5, Substituted: 0.4, Wrong: 0.025}
	r, c := runRetrain(t, RetrainInput{}, cur, retrain.Figures{R1: 0.6, R5: 0.85, MRR: 0.66, N: 40, Tools: 5, Substituted: 0.5, Wrong: 0.1, Fresh: 40})
	if r.Promoted || c.Promote || !strings.Contains(r.Reason, "wrong tool") || r.Candidate.Wrong != 0.1 {
		t.Fatalf("result %+v, conclude %+v", r, c)
	}
}

// TestRetrainHoldsARollback: after an operator rolled back from a
// version, a candidate better on the same evidence stays out until enough
// of its held-out queries were served after everything that version had
// seen; a run started before workflow change "retrain-gate-rollback"
// replays counting every held-out query as new.
func TestRetrainHoldsARollback(t *testing.T) {
	cur := retrain.Figures{R1: 0.5, R5: 0.8, MRR: 0.6, N: 40, Tools: 5, Fresh: 3}
	cand := retrain.Figures{R1: 0.6, R5: 0.85, MRR: 0.66, N: 40, Tools: 5, Fresh: 3}
	r, c := runRetrain(t, RetrainInput{}, cur, cand)
	if r.Promoted || c.Promote || !strings.Contains(r.Reason, "rolled back") {
		t.Fatalf("result %+v, conclude %+v", r, c)
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(RetrainWorkflow)
	var a *activities.Retrain
	env.RegisterActivity(a)
	env.OnGetVersion("retrain-gate-rollback", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	env.OnActivity(a.TrainCandidate, mock.Anything, mock.Anything).Return(activities.TrainedCandidate{ID: "rv-1", Counts: retrain.Counts{Events: 100, HeldOut: 40}}, nil).Once()
	env.OnActivity(a.EvaluateCandidate, mock.Anything, "rv-1").Return(retrain.Evaluation{ID: "rv-1", Current: cur, Candidate: cand}, nil).Once()
	env.OnActivity(a.ConcludeCandidate, mock.Anything, mock.Anything).Return(retrain.StatusPromoted, nil).Once()
	env.ExecuteWorkflow(RetrainWorkflow, RetrainInput{})
	var res RetrainResult
	if err := env.GetWorkflowResult(&res); err != nil || !res.Promoted {
		t.Fatalf("replayed before the change: %+v, %v; want it promoted as it was", res, err)
	}
}

func TestRetrainKeepsCurrentOnTooFewHeldOut(t *testing.T) {
	cur := retrain.Figures{R1: 0.2, R5: 0.4, MRR: 0.3, N: 5, Tools: 5}
	r, c := runRetrain(t, RetrainInput{}, cur, retrain.Figures{R1: 1, R5: 1, MRR: 1, N: 5, Tools: 5})
	if r.Promoted || c.Promote || c.Reason == "" || r.Reason != c.Reason {
		t.Fatalf("result %+v, conclude %+v", r, c)
	}
}

func TestRetrainTrainingFailureStops(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(RetrainWorkflow)
	var a *activities.Retrain
	env.RegisterActivity(a)
	env.OnActivity(a.TrainCandidate, mock.Anything, mock.Anything).Return(activities.TrainedCandidate{},
		temporal.NewNonRetryableApplicationError("needs two tools", activities.ErrTypeInvalidInput, nil)).Once()
	env.ExecuteWorkflow(RetrainWorkflow, RetrainInput{})
	if err := env.GetWorkflowError(); err == nil {
		t.Fatal("a failed training did not fail the retrain")
	}
	env.AssertExpectations(t)
}
