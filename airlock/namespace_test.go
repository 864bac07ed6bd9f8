package airlock

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// putTool stores a tool whose manifest names its provenance.
func putTool(t *testing.T, st graph.Store, id, status, origin, specURL string) {
	t.Helper()
	m, _ := json.Marshal(map[string]any{"toolId": id, "source": map[string]string{"origin": origin, "specUrl": specURL}})
	if _, err := st.UpsertTool(context.Background(), graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Verb: "DO_THING", Name: id,
		Category: "misc", Status: status, Permissions: []string{"public"}}, Description: "A tool.", Manifest: m}); err != nil {
		t.Fatal(err)
	}
}

// ForeignTools names every tool of a wrapper's name, whatever its status,
// that the spec at the location did not onboard: a module's, another
// spec's; the spec's own tools (a re-approval) and other names' are not.
func TestForeignTools(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	loc := "https://specs.example/units.yaml"
	putTool(t, st, "units.calculate", graph.StatusActive, "module", "")
	putTool(t, st, "units.convert", graph.StatusDeprecated, "openapi", "https://other.example/units.yaml")
	putTool(t, st, "units.mine", graph.StatusActive, "openapi", loc)
	putTool(t, st, "units_x.other", graph.StatusActive, "module", "")
	putTool(t, st, "unitsy.other", graph.StatusActive, "module", "")
	got, err := ForeignTools(ctx, st, "units", loc)
	if err != nil || !slices.Equal(got, []string{"units.calculate", "units.convert"}) {
		t.Fatalf("foreign tools of units: %v %v", got, err)
	}
	if got, err := ForeignTools(ctx, st, "weather", loc); err != nil || len(got) != 0 {
		t.Fatalf("an unused name: %v %v", got, err)
	}
}

// An approval (one sent while its review was still being prepared, which
// the review service could not check) whose wrapper name a module's tool
// holds fails before anything is built, registered or deprecated.
func TestOnboardingLeavesForeignToolsAlone(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile(petstore)
	if err != nil {
		t.Fatal(err)
	}
	st := openStore(t)
	files := &Files{Root: t.TempDir()}
	hash, err := files.PutSpec(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	putTool(t, st, "pet_clinic.list_pets", graph.StatusActive, "module", "")
	putTool(t, st, "pet_clinic.vaccinate", graph.StatusActive, "module", "")
	reg := &fakeRegistrar{}
	onb := &Onboarding{Onboarder: &Onboarder{}, Files: files, Definitions: st, Registrar: reg, Catalogue: st}
	res, err := onb.Approve(ctx, "airlock-x", hash, "https://specs.example/petstore.yaml", Policy{BaseURL: "https://api.example"})
	if err != nil || res.Outcome.OK() || !strings.Contains(res.Outcome.Error, `"pet_clinic" is held by 2`) || len(res.ToolIDs) != 0 {
		t.Fatalf("approval over a module's tools: %+v %v", res, err)
	}
	if len(reg.got) != 0 {
		t.Fatalf("manifests were registered: %d", len(reg.got))
	}
	if _, err := files.Approval("pet_clinic"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("an approval was recorded: %v", err)
	}
	for _, id := range []string{"pet_clinic.list_pets", "pet_clinic.vaccinate"} {
		if tl, err := st.GetTool(ctx, id); err != nil || tl.Status != graph.StatusActive || !strings.Contains(string(tl.Manifest), `"module"`) {
			t.Fatalf("%s after the refused approval: %+v %v", id, tl.ToolSummary, err)
		}
	}
}
