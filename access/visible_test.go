package access_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// tools is a ToolGetter over a map; a missing id is fault.ErrNotFound.
type tools map[string]graph.Tool

func (m tools) GetTool(_ context.Context, id string) (graph.Tool, error) {
	if t, ok := m[id]; ok {
		return t, nil
	}
	if id == "broken" {
		return graph.Tool{}, errors.New("disk on fire")
	}
	return graph.Tool{}, fault.ErrNotFound
}

// ToolsNearEntities answers the tools whose id starts with the entity key
// and a dot, through the filter.
func (m tools) ToolsNearEntities(_ context.Context, keys []string, _ int, f graph.Filter) ([]graph.EntityHit, error) {
	var out []graph.EntityHit
	for _, k := range keys {
		for id, t := range m {
			if strings.HasPrefix(id, k+".") && t.Status == graph.StatusActive && (f.Allow == nil || f.Allow(&t.ToolSummary)) {
				out = append(out, graph.EntityHit{ToolID: id, EntityKey: k, Depth: 1})
			}
		}
	}
	return out, nil
}

func catalogue() tools {
	mk := func(id string, perms ...string) graph.Tool {
		return graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Status: graph.StatusActive, Permissions: perms}}
	}
	off := mk("pub.off", "public")
	off.Status = graph.StatusDisabled
	return tools{"pub.tool": mk("pub.tool", "public"), "vet.only": mk("vet.only", access.AnyOf([]string{"vet"}, nil)), "pub.off": off}
}

func TestVisibleIDsKeepsWhatTheCallerMayExecute(t *testing.T) {
	ctx := context.Background()
	ids := []string{"vet.only", "gone", "pub.tool", "pub.off"}
	got, err := access.VisibleIDs(ctx, catalogue(), ids, access.Caller{UserID: "vic", Level: "user", Roles: []string{"approver"}})
	if err != nil || !slices.Equal(got, []string{"pub.tool"}) {
		t.Fatalf("approver without vet: %v %v", got, err)
	}
	got, err = access.VisibleIDs(ctx, catalogue(), ids, access.Caller{UserID: "val", Level: "user", Roles: []string{"vet"}})
	if err != nil || !slices.Equal(got, []string{"vet.only", "pub.tool"}) {
		t.Fatalf("vet: %v %v", got, err)
	}
	if _, err := access.VisibleIDs(ctx, catalogue(), []string{"broken"}, access.Caller{}); err == nil || errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("a store failure must not pass as hidden: %v", err)
	}
}

func TestVisibleGapsNameOnlyExecutableTools(t *testing.T) {
	gaps := []graph.Gap{
		{Verb: "GET_COMIC", Entities: []string{"Vet", "Pub"}, Closest: []graph.GapCandidate{{ToolID: "vet.only", Score: 0.7}, {ToolID: "pub.tool", Score: 0.5}}},
		{Verb: "PET_VET", Status: graph.GapClosed, ClosedBy: "vet.only"},
	}
	got, err := access.VisibleGaps(context.Background(), catalogue(), gaps, access.Caller{UserID: "vic", Level: "user", Roles: []string{"approver"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got[0].Closest) != 1 || got[0].Closest[0].ToolID != "pub.tool" || got[1].ClosedBy != "" || got[1].Status != graph.GapClosed ||
		!slices.Equal(got[0].Entities, []string{"Pub"}) {
		t.Fatalf("approver without vet sees %+v", got)
	}
	if len(gaps[0].Closest) != 2 || gaps[1].ClosedBy != "vet.only" {
		t.Fatalf("the input was changed: %+v", gaps)
	}
	got, err = access.VisibleGaps(context.Background(), catalogue(), gaps, access.Caller{UserID: "val", Level: "user", Roles: []string{"vet"}})
	if err != nil || len(got[0].Closest) != 2 || got[1].ClosedBy != "vet.only" || len(got[0].Entities) != 2 {
		t.Fatalf("vet sees %+v %v", got, err)
	}
}
