package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/airlock/review"
	"github.com/toolsmith/toolsmith/internal/config"
	"github.com/toolsmith/toolsmith/workflows"
)

// reviewTemporal answers a review's state query and records the decisions
// it is sent, as the review's update handler would.
type reviewTemporal struct {
	states  map[string]workflows.AirlockState
	decided map[string]workflows.Decision
}

type jsonValue struct{ v any }

func (j jsonValue) HasValue() bool { return j.v != nil }
func (j jsonValue) Get(ptr any) error {
	b, err := json.Marshal(j.v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, ptr)
}

type updated struct{}

func (updated) WorkflowID() string             { return "" }
func (updated) RunID() string                  { return "" }
func (updated) UpdateID() string               { return "" }
func (updated) Get(context.Context, any) error { return nil }

func (f *reviewTemporal) ExecuteWorkflow(context.Context, client.StartWorkflowOptions, any, ...any) (client.WorkflowRun, error) {
	return nil, errors.New("not used")
}
func (f *reviewTemporal) UpdateWorkflow(_ context.Context, o client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	f.decided[o.WorkflowID] = o.Args[0].(workflows.Decision)
	return updated{}, nil
}
func (f *reviewTemporal) QueryWorkflow(_ context.Context, id, _, _ string, _ ...any) (converter.EncodedValue, error) {
	st, ok := f.states[id]
	if !ok {
		return nil, serviceerror.NewNotFound("workflow not found")
	}
	return jsonValue{st}, nil
}
func (f *reviewTemporal) ListWorkflow(context.Context, *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	return &workflowservice.ListWorkflowExecutionsResponse{}, nil
}
func (f *reviewTemporal) GetWorkflow(context.Context, string, string) client.WorkflowRun { return nil }

// `toolsmith airlock approve` checks the policy against the pending
// review as the API does: an operation the review lacks is refused with
// the API's message (the valid names), a usage error, and nothing is sent,
// so the review stays pending; a valid approval and a reject are sent.
func TestAirlockDecisionChecksOperations(t *testing.T) {
	ctx := context.Background()
	f := &reviewTemporal{decided: map[string]workflows.Decision{}, states: map[string]workflows.AirlockState{
		"airlock-1": {Status: workflows.AirlockPending, Review: workflows.SpecReview{Slug: "pets",
			Operations: []workflows.ReviewOperation{{Name: "list_pets", OperationID: "listPets"}}}},
	}}
	var out bytes.Buffer
	err := sendDecision(ctx, &out, f, review.Config{}, decision{verb: "approve"}, airlock.Policy{Operations: []string{"nosuch"}}, "airlock-1")
	if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), "policy.operations[0]") || !strings.Contains(err.Error(), "listPets") {
		t.Fatalf("an unknown operation: %v", err)
	}
	if len(f.decided) != 0 || out.Len() != 0 {
		t.Fatalf("a refused approval was sent: %v %q", f.decided, out.String())
	}
	if err := sendDecision(ctx, &out, f, review.Config{}, decision{verb: "approve"}, airlock.Policy{Operations: []string{"listPets"}}, "airlock-1"); err != nil {
		t.Fatal(err)
	}
	a := f.decided["airlock-1"].Approve
	if a == nil || !strings.HasPrefix(a.Reviewer, "temporal-operator:") || !strings.Contains(out.String(), "approve recorded") {
		t.Fatalf("approval sent: %+v %q", a, out.String())
	}
	if err := sendDecision(ctx, &out, f, review.Config{}, decision{verb: "reject", reason: "no"}, airlock.Policy{}, "airlock-2"); err == nil || errors.Is(err, config.ErrInvalid) {
		t.Fatalf("reject of an unknown review: %v", err)
	}
}
