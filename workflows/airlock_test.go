package workflows

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/airlock"
)

const testHash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func airlockEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(AirlockWorkflow)
	env.RegisterWorkflow(ScanSourcesWorkflow)
	env.RegisterActivity(&activities.Airlock{})
	var a *activities.Airlock
	env.OnActivity(a.PrepareReview, mock.Anything, mock.Anything).Return(airlock.Review{SpecHash: testHash, Title: "Pets", Slug: "pets", Operations: []airlock.ReviewOperation{{Name: "list_pets"}}}, nil).Maybe()
	return env
}

func TestAirlockApproveOnboardsAndTellsSubscribers(t *testing.T) {
	env := airlockEnv(t)
	var a *activities.Airlock
	env.OnActivity(a.OnboardSpec, mock.Anything, mock.MatchedBy(func(in activities.OnboardInput) bool {
		return in.SpecHash == testHash && in.Policy.QuotaPerDay == 100
	})).Return(activities.OnboardOutput{ToolIDs: []string{"pets.list_pets"}, Slug: "pets"}, nil).Once()
	var notified []AirlockOutcome
	env.OnSignalExternalWorkflow(mock.Anything, "verb-X", "", SignalAirlockOutcome, mock.Anything).Return(func(_, _, _ string, _ string, arg any) error {
		notified = append(notified, arg.(AirlockOutcome))
		return nil
	})
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalSubscribe, SubscribeSignal{WorkflowID: "verb-X"})
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		// A bad policy is ignored (and shown in the review state), not obeyed.
		env.SignalWorkflow(SignalApprove, ApproveSignal{Reviewer: "ana", Policy: Policy{RateLimitPerMinute: -1}})
	}, 2*time.Minute)
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(ReviewQuery)
		if err != nil {
			t.Errorf("query: %v", err)
			return
		}
		var st AirlockState
		_ = v.Get(&st)
		if st.Status != AirlockPending || st.Review.Title != "Pets" || len(st.Ignored) != 1 {
			t.Errorf("state while pending: %+v", st)
		}
		env.SignalWorkflow(SignalApprove, ApproveSignal{Reviewer: "ana", Policy: Policy{QuotaPerDay: 100}})
	}, 3*time.Minute)
	env.ExecuteWorkflow(AirlockWorkflow, AirlockInput{SpecHash: testHash, Location: "https://specs.example/pets.yaml"})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("completed=%v err=%v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	var out AirlockOutcome
	_ = env.GetWorkflowResult(&out)
	if out.Status != AirlockOnboarded || out.Reviewer != "ana" || len(out.ToolIDs) != 1 {
		t.Fatalf("outcome: %+v", out)
	}
	if len(notified) != 1 || notified[0].Status != AirlockOnboarded {
		t.Fatalf("subscribers: %+v", notified)
	}
	env.AssertExpectations(t)
}

func TestAirlockRejectNeverOnboards(t *testing.T) {
	env := airlockEnv(t)
	var a *activities.Airlock
	env.OnActivity(a.SetSpecStatus, mock.Anything, activities.SpecStatusInput{SpecHash: testHash, Status: "rejected",
		Name: "pets", Location: "https://specs.example/pets.yaml"}).Return(nil).Once() // the review's name is given back
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalReject, RejectSignal{Reviewer: "bo", Reason: "sends data abroad"})
	}, time.Hour)
	env.ExecuteWorkflow(AirlockWorkflow, AirlockInput{SpecHash: testHash, Location: "https://specs.example/pets.yaml"})
	var out AirlockOutcome
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if out.Status != AirlockRejected || out.Reason != "sends data abroad" || len(out.ToolIDs) != 0 {
		t.Fatalf("outcome: %+v", out)
	}
	env.AssertExpectations(t) // OnboardSpec was never mocked: a call would have failed the test
}

func TestAirlockReviewTimesOutCleanly(t *testing.T) {
	env := airlockEnv(t)
	var a *activities.Airlock
	env.OnActivity(a.SetSpecStatus, mock.Anything, activities.SpecStatusInput{SpecHash: testHash, Status: "available", Name: "pets"}).Return(nil).Once()
	env.ExecuteWorkflow(AirlockWorkflow, AirlockInput{SpecHash: testHash, ReviewTimeout: 48 * time.Hour})
	var out AirlockOutcome
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if out.Status != AirlockTimedOut || out.Reason != "no decision within 48h0m0s" {
		t.Fatalf("outcome: %+v", out)
	}
	env.AssertExpectations(t)
}

func TestAirlockFailedOnboardingIsReported(t *testing.T) {
	env := airlockEnv(t)
	var a *activities.Airlock
	env.OnActivity(a.OnboardSpec, mock.Anything, mock.Anything).Return(activities.OnboardOutput{Stage: "test", Error: "1 generated test failed"}, nil)
	env.OnActivity(a.SetSpecStatus, mock.Anything, activities.SpecStatusInput{SpecHash: testHash, Status: "available", Name: "pets"}).Return(nil).Once()
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalApprove, ApproveSignal{}) }, time.Minute)
	env.ExecuteWorkflow(AirlockWorkflow, AirlockInput{SpecHash: testHash})
	var out AirlockOutcome
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if out.Status != AirlockFailed || out.Stage != "test" {
		t.Fatalf("outcome: %+v", out)
	}
}

func TestScanSourcesOpensReviewsForNewSpecs(t *testing.T) {
	env := airlockEnv(t)
	var a *activities.Airlock
	env.OnActivity(a.ListSources, mock.Anything).Return([]string{"s1", "s2"}, nil)
	env.OnActivity(a.ScanSource, mock.Anything, "s1").Return(activities.ScanSourceOutput{SourceID: "s1", Specs: 2, Known: 1,
		NewSpecs: []activities.FoundSpec{{Hash: testHash, Location: "https://specs.example/pets.yaml"}}}, nil)
	env.OnActivity(a.ScanSource, mock.Anything, "s2").Return(activities.ScanSourceOutput{SourceID: "s2", Error: "HTTP 404"}, nil)
	env.OnActivity(a.OpenReview, mock.Anything, mock.MatchedBy(func(in activities.OpenReviewInput) bool {
		return in.SpecHash == testHash && in.SourceID == "s1"
	})).Return(AirlockWorkflowID(testHash), nil).Once()
	env.ExecuteWorkflow(ScanSourcesWorkflow, ScanInput{})
	var out ScanOutput
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if len(out.Reports) != 2 || len(out.Reviews) != 1 || out.Reviews[0] != "airlock-0123456789abcdef" || out.Reports[1].Error != "HTTP 404" {
		t.Fatalf("scan output: %+v", out)
	}
	env.AssertExpectations(t)
}

func TestHealthCheckWorkflow(t *testing.T) {
	env := airlockEnv(t)
	env.RegisterWorkflow(HealthCheckWorkflow)
	var a *activities.Airlock
	env.OnActivity(a.CheckHealth, mock.Anything).Return(airlock.HealthReport{Checked: 2, Disabled: []string{"pets"}}, nil).Once()
	env.ExecuteWorkflow(HealthCheckWorkflow)
	var rep HealthCheckReport
	if err := env.GetWorkflowResult(&rep); err != nil || rep.Checked != 2 || rep.Disabled[0] != "pets" {
		t.Fatalf("report %+v %v", rep, err)
	}
}

// Two quick rejects: the first decides the review, the second is refused
// (ErrTypeReviewDecided) instead of being accepted and dropped; an approval
// after the rejection is refused too. The spec is marked rejected once.
func TestAirlockDecidesOnce(t *testing.T) {
	env := airlockEnv(t)
	var a *activities.Airlock
	env.OnActivity(a.SetSpecStatus, mock.Anything, activities.SpecStatusInput{SpecHash: testHash, Status: "rejected", Name: "pets"}).Return(nil).Once()
	var accepted, refused []string
	send := func(id string, d Decision) {
		env.UpdateWorkflow(UpdateDecide, id, &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) {
				var appErr *temporal.ApplicationError
				if !errors.As(err, &appErr) || appErr.Type() != ErrTypeReviewDecided {
					t.Errorf("%s refused with %v, want %s", id, err, ErrTypeReviewDecided)
				}
				refused = append(refused, id)
			},
			OnComplete: func(_ any, err error) {
				if err != nil {
					var appErr *temporal.ApplicationError
					if !errors.As(err, &appErr) || appErr.Type() != ErrTypeReviewDecided {
						t.Errorf("%s failed with %v", id, err)
					}
					refused = append(refused, id)
					return
				}
				accepted = append(accepted, id)
			},
		}, d)
	}
	env.RegisterDelayedCallback(func() {
		send("reject-1", Decision{Reject: &RejectSignal{Reviewer: "bo", Reason: "first"}})
		send("reject-2", Decision{Reject: &RejectSignal{Reviewer: "cy", Reason: "second"}})
		send("approve-3", Decision{Approve: &ApproveSignal{Reviewer: "di"}})
	}, time.Hour)
	env.ExecuteWorkflow(AirlockWorkflow, AirlockInput{SpecHash: testHash})
	var out AirlockOutcome
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if out.Status != AirlockRejected || out.Reason != "first" || out.Reviewer != "bo" {
		t.Fatalf("outcome: %+v", out)
	}
	if len(accepted) != 1 || accepted[0] != "reject-1" || len(refused) != 2 {
		t.Fatalf("accepted %v, refused %v", accepted, refused)
	}
	env.AssertExpectations(t)
}

// A signalled second reject is read and recorded as ignored, not left
// unhandled.
func TestAirlockSecondRejectSignalIsRecorded(t *testing.T) {
	env := airlockEnv(t)
	var a *activities.Airlock
	env.OnActivity(a.SetSpecStatus, mock.Anything, activities.SpecStatusInput{SpecHash: testHash, Status: "rejected", Name: "pets"}).Return(nil).Once()
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalReject, RejectSignal{Reviewer: "bo", Reason: "first"})
		env.SignalWorkflow(SignalReject, RejectSignal{Reviewer: "cy", Reason: "second"})
	}, time.Hour)
	env.ExecuteWorkflow(AirlockWorkflow, AirlockInput{SpecHash: testHash})
	var out AirlockOutcome
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	v, err := env.QueryWorkflow(ReviewQuery)
	if err != nil {
		t.Fatal(err)
	}
	var st AirlockState
	if err := v.Get(&st); err != nil {
		t.Fatal(err)
	}
	if out.Reason != "first" || len(st.Ignored) != 1 || st.Ignored[0] != "reject: the review is rejected" {
		t.Fatalf("outcome %+v, ignored %v", out, st.Ignored)
	}
}
