package fulfil_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/fulfil"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/workflows"
)

// buildQuery answers BuildQuery with a fixed state.
type buildQuery struct{ st workflows.BuildState }

func (buildQuery) ExecuteWorkflow(context.Context, client.StartWorkflowOptions, any, ...any) (client.WorkflowRun, error) {
	panic("not started here")
}

func (q buildQuery) QueryWorkflow(context.Context, string, string, string, ...any) (converter.EncodedValue, error) {
	return buildValue(q), nil
}

type buildValue struct{ st workflows.BuildState }

func (v buildValue) HasValue() bool { return true }
func (v buildValue) Get(ptr any) error {
	b, err := json.Marshal(v.st)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, ptr)
}

// TestBuildStateNamesOnlyExecutableClosestTools: a build's input lists
// the gap's closest tools; the state answers only those the caller may
// execute.
func TestBuildStateNamesOnlyExecutableClosestTools(t *testing.T) {
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
	b := &fulfil.Builds{Gaps: st, Temporal: buildQuery{workflows.BuildState{Status: workflows.BuildWriting,
		Input: workflows.BuildInput{Verb: "CHECK_PET", Closest: []string{"vet.pet_check", "pets.find"}}}}}
	for _, c := range []struct {
		roles []string
		want  []string
	}{{[]string{"approver"}, []string{"pets.find"}}, {[]string{"approver", "vet"}, []string{"vet.pet_check", "pets.find"}}} {
		got, err := b.State(ctx, "build-CHECK_PET", access.Caller{UserID: "vic", Level: "user", Roles: c.roles})
		if err != nil || !slices.Equal(got.Input.Closest, c.want) {
			t.Fatalf("roles %v: closest %v (%v), want %v", c.roles, got.Input.Closest, err, c.want)
		}
	}
}
