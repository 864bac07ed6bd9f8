package review

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/workflows"
)

// fake answers queries from states and decides each review once, as the
// workflow's update handler does.
type fake struct {
	states  map[string]workflows.AirlockState
	decided map[string]workflows.Decision
}

type value struct{ v any }

func (v value) HasValue() bool { return v.v != nil }
func (v value) Get(ptr any) error {
	b, _ := json.Marshal(v.v)
	return json.Unmarshal(b, ptr)
}

func (f *fake) ExecuteWorkflow(context.Context, client.StartWorkflowOptions, any, ...any) (client.WorkflowRun, error) {
	return nil, errors.New("no scans here")
}

type done struct{}

func (done) WorkflowID() string             { return "" }
func (done) RunID() string                  { return "" }
func (done) UpdateID() string               { return "" }
func (done) Get(context.Context, any) error { return nil }

func (f *fake) UpdateWorkflow(_ context.Context, o client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	if _, ok := f.decided[o.WorkflowID]; ok {
		return nil, temporal.NewApplicationError("the review is decided, not pending", workflows.ErrTypeReviewDecided)
	}
	f.decided[o.WorkflowID] = o.Args[0].(workflows.Decision)
	return done{}, nil
}

func (f *fake) QueryWorkflow(_ context.Context, id, _, _ string, _ ...any) (converter.EncodedValue, error) {
	st, ok := f.states[id]
	if !ok {
		return nil, serviceerror.NewNotFound("no such workflow")
	}
	return value{st}, nil
}

func (f *fake) ListWorkflow(context.Context, *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	out := &workflowservice.ListWorkflowExecutionsResponse{}
	for id := range f.states {
		out.Executions = append(out.Executions, &workflowpb.WorkflowExecutionInfo{Execution: &commonpb.WorkflowExecution{WorkflowId: id}})
	}
	return out, nil
}

func (f *fake) GetWorkflow(context.Context, string, string) client.WorkflowRun { return nil }

func newFake() (*Service, *fake) {
	f := &fake{states: map[string]workflows.AirlockState{}, decided: map[string]workflows.Decision{}}
	return New(f, nil, Config{}), f
}

// A decision is checked before it is sent (the policy, the reason), sent
// once to a pending review, and refused (ErrConflict) for a review that
// is decided or ended; an unknown review is ErrNotFound.
func TestDecisions(t *testing.T) {
	ctx := context.Background()
	s, f := newFake()
	f.states["airlock-1"] = workflows.AirlockState{Status: workflows.AirlockPending, Review: workflows.SpecReview{Title: "Pets", Slug: "pets"}}
	f.states["airlock-2"] = workflows.AirlockState{Status: workflows.AirlockOnboarded, Outcome: &workflows.AirlockOutcome{Status: "onboarded", ToolIDs: []string{"pets.list"}}}
	_, err := s.Approve(ctx, "airlock-1", "ana", access.Caller{}, airlock.Policy{RateLimitPerMinute: -1}, 0)
	if fs := fault.Fields(err); len(fs) == 0 || fs[0].Path != "policy.rateLimitPerMinute" {
		t.Fatalf("bad policy: %v", err)
	}
	if _, err := s.Reject(ctx, "airlock-1", "ana", access.Caller{}, "  ", 0); !errors.Is(err, fault.ErrInvalid) || fault.Fields(err)[0].Path != "reason" {
		t.Fatalf("no reason: %v", err)
	}
	if len(f.decided) != 0 {
		t.Fatalf("refused decisions were sent: %v", f.decided)
	}
	res, err := s.Reject(ctx, "airlock-1", "ana", access.Caller{}, "not ours", 0)
	if err != nil || res.Decision != DecisionReject || res.Outcome != nil || f.decided["airlock-1"].Reject.Reason != "not ours" {
		t.Fatalf("reject: %+v %v", res, err)
	}
	if _, err := s.Approve(ctx, "airlock-1", "ana", access.Caller{}, airlock.Policy{}, 0); !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("approve after reject: %v", err)
	}
	if _, err := s.Approve(ctx, "airlock-2", "ana", access.Caller{}, airlock.Policy{}, 0); !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("approve an onboarded review: %v", err)
	}
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("unknown review: %v", err)
	}
	st, err := s.Get(ctx, "airlock-2")
	if err != nil || st.Decidable() || st.Outcome == nil || st.Outcome.ToolIDs[0] != "pets.list" {
		t.Fatalf("state: %+v %v", st, err)
	}
	pending, err := s.Pending(ctx)
	if err != nil || len(pending) != 2 {
		t.Fatalf("pending: %+v %v", pending, err)
	}
	// Not base64, base64 but made up, and a real cursor cut short: each is
	// refused before Temporal sees it (which retries on a token it cannot
	// read until the deadline).
	for _, bad := range []string{"%%%", "bad", sealCursor([]byte(`{"page":2}`))[:12]} {
		if _, err := s.Decided(ctx, access.Caller{}, 10, bad); !errors.Is(err, fault.ErrMalformed) {
			t.Fatalf("bad cursor %q: %v", bad, err)
		}
	}
	if tok, ok := openCursor(sealCursor([]byte(`{"page":2}`))); !ok || string(tok) != `{"page":2}` {
		t.Fatalf("a sealed cursor does not open to its token: %q %v", tok, ok)
	}
}

// A build takes a decision only once a program has passed: while it is
// writing (a review "preparing") the decision is refused as a conflict
// that says so, and never sent.
func TestBuildDecisionWhileWriting(t *testing.T) {
	ctx := context.Background()
	s, f := newFake()
	writing := workflows.BuildState{Status: workflows.BuildWriting, Input: workflows.BuildInput{Verb: "ROMAN_NUMERAL"}, Rounds: []workflows.BuildRound{{Round: 1, Stage: "build"}}}
	f.states["build-ROMAN_NUMERAL"] = writing.AirlockView("build-ROMAN_NUMERAL")
	_, err := s.Approve(ctx, "build-ROMAN_NUMERAL", "ana", access.Caller{}, airlock.Policy{}, 0)
	if !errors.Is(err, fault.ErrConflict) || !strings.Contains(err.Error(), "still writing") || !strings.Contains(err.Error(), "round 2") {
		t.Fatalf("approve while writing: %v", err)
	}
	if _, err := s.Reject(ctx, "build-ROMAN_NUMERAL", "ana", access.Caller{}, "too soon", 0); !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("reject while writing: %v", err)
	}
	if len(f.decided) != 0 {
		t.Fatalf("a decision was sent to a writing build: %v", f.decided)
	}
	pending := writing
	pending.Status = workflows.BuildPending
	f.states["build-ROMAN_NUMERAL"] = pending.AirlockView("build-ROMAN_NUMERAL")
	if _, err := s.Reject(ctx, "build-ROMAN_NUMERAL", "ana", access.Caller{}, "not needed", 0); err != nil || f.decided["build-ROMAN_NUMERAL"].Reject == nil {
		t.Fatalf("reject a pending build: %v", err)
	}
}

// A reviewer is named by the authenticated subject, with the key owner's
// name when there is one.
func TestReviewer(t *testing.T) {
	if got := Reviewer(identity.Principal{Subject: "key:k1", Name: "ana"}, access.Caller{UserID: "key:k1"}); got != "key:k1 (ana)" {
		t.Fatalf("with a name: %q", got)
	}
	if got := Reviewer(identity.Principal{Subject: "oidc:bo", Name: "oidc:bo"}, access.Caller{UserID: "oidc:bo"}); got != "oidc:bo" {
		t.Fatalf("without: %q", got)
	}
}

// An approval whose policy.operations names no operation of the review is
// refused before it is sent (a ValidationError on policy.operations[i]
// listing the valid names), so the review stays pending; names, operationIds
// and tags pass; a review still preparing after the wait cannot check them.
func TestApproveChecksPolicyOperations(t *testing.T) {
	ctx := context.Background()
	s, f := newFake()
	ops := []workflows.ReviewOperation{{Name: "list_pets", OperationID: "listPets", Tags: []string{"pets"}}, {Name: "get_pet", OperationID: "getPet"}}
	f.states["airlock-1"] = workflows.AirlockState{Status: workflows.AirlockPending, Review: workflows.SpecReview{Slug: "pets", Operations: ops}}
	f.states["airlock-2"] = workflows.AirlockState{Status: workflows.AirlockPreparing}
	_, err := s.Approve(ctx, "airlock-1", "ana", access.Caller{}, airlock.Policy{Operations: []string{"nope"}}, 0)
	fs := fault.Fields(err)
	if !errors.Is(err, fault.ErrInvalid) || len(fs) != 1 || fs[0].Path != "policy.operations[0]" {
		t.Fatalf("typo: %v", err)
	}
	for _, name := range []string{"list_pets", "listPets", "getPet", "pets"} {
		if !strings.Contains(fs[0].Message, name) {
			t.Fatalf("the message %q does not list %s", fs[0].Message, name)
		}
	}
	s.prepareWait = 300 * time.Millisecond // waited for, then refused
	if _, err := s.Approve(ctx, "airlock-2", "ana", access.Caller{}, airlock.Policy{Operations: []string{"list_pets"}}, 0); !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("operations of a review still preparing: %v", err)
	}
	if len(f.decided) != 0 {
		t.Fatalf("refused approvals were sent: %v", f.decided)
	}
	if _, err := s.Approve(ctx, "airlock-1", "ana", access.Caller{}, airlock.Policy{Operations: []string{"listPets", "pets", "get_pet"}}, 0); err != nil {
		t.Fatalf("valid operations: %v", err)
	}
	if got := f.decided["airlock-1"].Approve.Policy.Operations; len(got) != 3 {
		t.Fatalf("sent policy operations %v", got)
	}
}
