package review

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/workflows"
)

// A build's review names as closest only the tools the caller may
// execute.
func TestViewNamesOnlyExecutableClosestTools(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "g.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	for id, perm := range map[string]string{"vet.pet_check": access.AnyOf([]string{"vet"}, nil), "pets.find": "public"} {
		if _, err := st.UpsertTool(ctx, graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Verb: "FIND_PET", Name: id, Category: "pets",
			Status: graph.StatusActive, Permissions: []string{perm}}, Description: "Pets.", Manifest: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	f := &fake{states: map[string]workflows.AirlockState{}, decided: map[string]workflows.Decision{}}
	f.states["build-CHECK_PET"] = workflows.AirlockState{Status: workflows.AirlockPending, Build: &workflows.BuildState{
		Input: workflows.BuildInput{Verb: "CHECK_PET", Closest: []string{"vet.pet_check", "pets.find"}}}}
	s := New(f, st, Config{})
	for _, c := range []struct {
		roles []string
		want  []string
	}{{[]string{"approver"}, []string{"pets.find"}}, {[]string{"approver", "vet"}, []string{"vet.pet_check", "pets.find"}}} {
		v, err := s.View(ctx, "build-CHECK_PET", access.Caller{UserID: "vic", Level: "user", Roles: c.roles})
		if err != nil || v.Build == nil || !slices.Equal(v.Build.Input.Closest, c.want) {
			t.Fatalf("roles %v: %+v %v, want closest %v", c.roles, v.Build, err, c.want)
		}
	}
}

// history answers a closed review's history with its outcome, as a
// Temporal client does.
type history struct {
	*fake
	outcomes map[string]workflows.AirlockOutcome
}

type events struct{ evs []*historypb.HistoryEvent }

func (e *events) HasNext() bool { return len(e.evs) > 0 }
func (e *events) Next() (*historypb.HistoryEvent, error) {
	ev := e.evs[0]
	e.evs = e.evs[1:]
	return ev, nil
}

func (h history) GetWorkflowHistory(_ context.Context, id, _ string, _ bool, _ enumspb.HistoryEventFilterType) client.HistoryEventIterator {
	p, err := converter.GetDefaultDataConverter().ToPayloads(h.outcomes[id])
	if err != nil {
		panic(err)
	}
	return &events{evs: []*historypb.HistoryEvent{{EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
		Attributes: &historypb.HistoryEvent_WorkflowExecutionCompletedEventAttributes{
			WorkflowExecutionCompletedEventAttributes: &historypb.WorkflowExecutionCompletedEventAttributes{Result: p}}}}}
}

// The tools a decided review onboarded are named, in the decided list and
// in the review by id, only to callers who may execute them: an approver
// without the role an approval required sees the outcome without its id.
func TestDecidedNamesOnlyExecutableTools(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "g.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	for id, perm := range map[string]string{"vet.pet_check": access.AnyOf([]string{"vet"}, nil), "vet.pet_find": "public"} {
		if _, err := st.UpsertTool(ctx, graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Verb: "FIND_PET", Name: id, Category: "pets",
			Status: graph.StatusActive, Permissions: []string{perm}}, Description: "Pets.", Manifest: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	out := workflows.AirlockOutcome{Status: workflows.AirlockOnboarded, Reviewer: "ana", ToolIDs: []string{"vet.pet_check", "vet.pet_find"}}
	f := &fake{states: map[string]workflows.AirlockState{"airlock-vet": {Status: workflows.AirlockOnboarded, Outcome: &out}}, decided: map[string]workflows.Decision{}}
	s := New(history{fake: f, outcomes: map[string]workflows.AirlockOutcome{"airlock-vet": out}}, st, Config{})
	for _, c := range []struct {
		roles []string
		want  []string
	}{{[]string{"approver"}, []string{"vet.pet_find"}}, {[]string{"approver", "vet"}, []string{"vet.pet_check", "vet.pet_find"}}} {
		caller := access.Caller{UserID: "vic", Level: "user", Roles: c.roles}
		page, err := s.Decided(ctx, caller, 10, "")
		if err != nil || len(page.Reviews) != 1 || page.Reviews[0].Status != workflows.AirlockOnboarded || !slices.Equal(page.Reviews[0].ToolIDs, c.want) {
			t.Fatalf("roles %v: decided %+v %v, want tools %v", c.roles, page.Reviews, err, c.want)
		}
		v, err := s.View(ctx, "airlock-vet", caller)
		if err != nil || v.Outcome == nil || v.Outcome.Status != workflows.AirlockOnboarded || !slices.Equal(v.Outcome.ToolIDs, c.want) {
			t.Fatalf("roles %v: view %+v %v, want tools %v", c.roles, v.Outcome, err, c.want)
		}
	}
}

// finished answers a decided review's outcome at once, as a Temporal
// client does for a review that ends within the wait.
type finished struct {
	*fake
	out workflows.AirlockOutcome
}

type outcomeRun struct {
	client.WorkflowRun
	out workflows.AirlockOutcome
}

func (r outcomeRun) Get(_ context.Context, ptr any) error { return value{r.out}.Get(ptr) }

func (f finished) GetWorkflow(context.Context, string, string) client.WorkflowRun {
	return outcomeRun{out: f.out}
}

// The answer to an approval (and a rejection) names, in its outcome, only
// the tools the deciding approver may execute, as the review by id does:
// an approver who required a role it lacks sees the outcome without the
// ids of the tools it onboarded.
func TestDecisionNamesOnlyExecutableTools(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "g.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	for id, perm := range map[string]string{"pet_clinic.list_pets": access.AnyOf([]string{"vet"}, nil), "pet_clinic.get_pet": "public"} {
		if _, err := st.UpsertTool(ctx, graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Verb: "FIND_PET", Name: id, Category: "pets",
			Status: graph.StatusActive, Permissions: []string{perm}}, Description: "Pets.", Manifest: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	out := workflows.AirlockOutcome{Status: workflows.AirlockOnboarded, Reviewer: "vic", ToolIDs: []string{"pet_clinic.list_pets", "pet_clinic.get_pet"}}
	for _, c := range []struct {
		roles []string
		want  []string
	}{{[]string{"approver"}, []string{"pet_clinic.get_pet"}}, {[]string{"approver", "vet"}, []string{"pet_clinic.list_pets", "pet_clinic.get_pet"}}} {
		caller := access.Caller{UserID: "vic", Level: "user", Roles: c.roles}
		for _, decide := range []string{"approve", "reject"} {
			f := &fake{states: map[string]workflows.AirlockState{"airlock-vet": {Status: workflows.AirlockPending}}, decided: map[string]workflows.Decision{}}
			s := New(finished{fake: f, out: out}, st, Config{})
			var res DecisionResult
			if decide == "approve" {
				res, err = s.Approve(ctx, "airlock-vet", "vic", caller, airlock.Policy{AllowedRoles: []string{"vet"}}, time.Second)
			} else {
				res, err = s.Reject(ctx, "airlock-vet", "vic", caller, "not ours", time.Second)
			}
			if err != nil || res.Outcome == nil || !slices.Equal(res.Outcome.ToolIDs, c.want) {
				t.Fatalf("roles %v, %s: %+v %v, want tools %v", c.roles, decide, res.Outcome, err, c.want)
			}
		}
	}
}
