package airlock

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/registry"
	"github.com/toolsmith/toolsmith/tool"
)

// A re-approval of the same spec (a new version at the same location) with
// fewer operations leaves no tool active that its wrapper cannot run: the
// tools it leaves out are deprecated with a reason naming the approval,
// hidden from the active listing, and refused by the runtime with that
// approval's name; the tools it keeps run. A later approval that includes
// an operation again re-activates its tool. Real wrappers are built and
// the tools live in a real registry, which the onboarding also reads for
// tools of the name the spec did not onboard: its own, deprecated ones
// included, never stop its re-approval.
func TestReapprovalWithFewerOperationsRetiresTheRest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs; skipped with -short")
	}
	ctx := context.Background()
	v1, err := os.ReadFile(petstore)
	if err != nil {
		t.Fatal(err)
	}
	v2 := bytes.Replace(v1, []byte("version: 2.1.0"), []byte("version: 2.2.0"), 1)
	store := openStore(t)
	reg := registry.New(store, hashing.New(64))
	files := &Files{Root: t.TempDir()}
	hash1, err := files.PutSpec(context.Background(), v1)
	if err != nil {
		t.Fatal(err)
	}
	hash2, err := files.PutSpec(context.Background(), v2)
	if err != nil || hash2 == hash1 {
		t.Fatal(err)
	}
	api := petsAPI(t)
	ob := testOnboarder(t, ctx)
	ob.Validate = func(m *tool.Manifest) error { tool.Normalize(m); return tool.Validate(m) }
	onb := &Onboarding{Onboarder: ob, Files: files, Definitions: store, Registrar: RegistryRegistrar{Registry: reg}, Catalogue: store}
	rt := &Runtime{Files: files, Executor: &Executor{Ledger: &MemoryLedger{}}}
	loc := "https://specs.example/petstore.yaml"
	active := func() []string {
		t.Helper()
		page, err := reg.List(ctx, graph.ListQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range page.Items {
			ids = append(ids, s.ID)
		}
		return ids
	}

	all, err := onb.Approve(ctx, "airlock-v1", hash1, loc, Policy{BaseURL: api.URL})
	if err != nil || !all.Outcome.OK() || len(all.ToolIDs) != 4 || len(all.Retired) != 0 {
		t.Fatalf("first approval: %+v %v", all, err)
	}
	if got := active(); !slices.Equal(got, sorted(all.ToolIDs)) {
		t.Fatalf("active after the first approval: %v, approved %v", got, all.ToolIDs)
	}

	fewer, err := onb.Approve(ctx, "airlock-v2", hash2, loc, Policy{BaseURL: api.URL, Operations: []string{"listPets"}})
	if err != nil || !fewer.Outcome.OK() || !slices.Equal(fewer.ToolIDs, []string{"pet_clinic.list_pets"}) {
		t.Fatalf("re-approval with one operation: %+v %v", fewer, err)
	}
	var left []string
	for _, id := range all.ToolIDs {
		if id != "pet_clinic.list_pets" {
			left = append(left, id)
		}
	}
	if !slices.Equal(sorted(fewer.Retired), sorted(left)) || !strings.Contains(strings.Join(fewer.Outcome.Warnings, " "), "deprecated") {
		t.Fatalf("retired %v (warnings %v), want %v", fewer.Retired, fewer.Outcome.Warnings, left)
	}
	if got := active(); !slices.Equal(got, []string{"pet_clinic.list_pets"}) {
		t.Fatalf("active after the re-approval: %v", got)
	}
	for _, id := range left {
		tl, err := reg.Get(ctx, id)
		if err != nil || tl.Status != graph.StatusDeprecated {
			t.Fatalf("%s: status %q %v", id, tl.Status, err)
		}
		h, err := reg.History(ctx, id)
		if err != nil || !strings.Contains(h[len(h)-1].Reason, "not in approval airlock-v2 of "+loc) {
			t.Fatalf("%s: history %+v %v", id, h, err)
		}
		_, err = rt.RunWrapped(ctx, id, map[string]any{}, access.Caller{})
		if !errors.Is(err, fault.ErrNotFound) || !strings.Contains(err.Error(), "not in approval airlock-v2") {
			t.Fatalf("run %s: %v", id, err)
		}
	}
	if out, err := rt.RunWrapped(ctx, "pet_clinic.list_pets", map[string]any{"limit": 5}, access.Caller{}); err != nil || !out.Success {
		t.Fatalf("run list_pets: %+v %v", out, err)
	}

	more, err := onb.Approve(ctx, "airlock-v3", hash2, loc, Policy{BaseURL: api.URL, Operations: []string{"listPets", "deletePet"}})
	if err != nil || !more.Outcome.OK() || !slices.Equal(sorted(more.ToolIDs), []string{"pet_clinic.delete_pet", "pet_clinic.list_pets"}) || len(more.Retired) != 0 {
		t.Fatalf("approval with an operation back: %+v %v", more, err)
	}
	if got := active(); !slices.Equal(got, sorted(more.ToolIDs)) {
		t.Fatalf("active after the third approval: %v", got)
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
