package review

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolsmith/toolsmith/access"
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
