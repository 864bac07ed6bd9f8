package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/workflows"
)

// A folder added as an openapi source (what the console sends) is
// scanned, and its two specs with the same title, pending at once, show
// the names they will get: one the title's name, the other the next name
// and the first as the holder (namePending). The holder's rejection does
// not change the other's name, and its approval gives exactly the name its
// review showed.
func TestAirlockFolderOfSameTitleSpecsShowsTheirNames(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wrapper")
	}
	e := airlockEnv(t, time.Hour)
	pets, err := os.ReadFile("../codegen/testdata/petstore/spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, p := range []string{"a/pets.yaml", "b/clinic.yaml"} {
		_ = os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), append(append([]byte{}, pets...), "\n# "+t.Name()+" "+p+"\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var added struct {
		ScanWorkflowID string `json:"scanWorkflowId"`
	}
	// A local folder is the owner's to register; the env's admin key is refused.
	if code := e.post("/api/v1/tools/sources", map[string]any{"type": "openapi", "location": dir}, nil); code != http.StatusForbidden {
		t.Fatalf("an admin adds a local folder: HTTP %d", code)
	}
	owner := e.key(identity.NewKey{Owner: "e2e owner", Level: "owner", Groups: []string{access.Wildcard}})
	if code := e.do(http.MethodPost, "/api/v1/tools/sources", map[string]any{"type": "openapi", "location": dir},
		http.Header{"Authorization": {"Bearer " + owner}}, &added); code != http.StatusCreated {
		t.Fatalf("add the folder: HTTP %d", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var scan workflows.ScanOutput
	if err := e.client.GetWorkflow(ctx, added.ScanWorkflowID, "").Get(ctx, &scan); err != nil || len(scan.Reviews) != 2 {
		t.Fatalf("scan of the folder: %+v %v", scan, err)
	}
	type item struct {
		ID, Slug, Location, NameTakenBy, Status string
		NamePending                             bool
	}
	var pending struct {
		Pending []item `json:"pending"`
	}
	eventually(t, 30*time.Second, func() error {
		code := e.do(http.MethodGet, "/api/v1/tools/pending", nil, nil, &pending)
		if code == 200 && len(pending.Pending) == 2 && pending.Pending[0].Status == workflows.AirlockPending && pending.Pending[1].Status == workflows.AirlockPending {
			return nil
		}
		return fmt.Errorf("pending: HTTP %d %+v", code, pending)
	})
	holder, other := pending.Pending[0], pending.Pending[1]
	if other.Slug == "pet_clinic" {
		holder, other = other, holder
	}
	if holder.Slug != "pet_clinic" || holder.NameTakenBy != "" || !strings.HasPrefix(other.Slug, "pet_clinic_") ||
		other.NameTakenBy != holder.Location || !other.NamePending {
		t.Fatalf("pending reviews: %+v", pending.Pending)
	}

	if code := e.post("/api/v1/tools/pending/"+holder.ID+"/reject", map[string]any{"reason": "one is enough"}, nil); code != http.StatusAccepted {
		t.Fatalf("reject: HTTP %d", code)
	}
	var rejected workflows.AirlockOutcome
	if err := e.client.GetWorkflow(ctx, holder.ID, "").Get(ctx, &rejected); err != nil || rejected.Status != workflows.AirlockRejected {
		t.Fatalf("reject: %+v %v", rejected, err)
	}
	var res struct {
		Outcome workflows.AirlockOutcome `json:"outcome"`
	}
	code := e.post("/api/v1/tools/pending/"+other.ID+"/approve?wait=5m", map[string]any{"policy": map[string]any{
		"baseUrl": "http://127.0.0.1:1/v1", "operations": []string{"listPets"}}}, &res)
	if code != http.StatusOK || res.Outcome.Status != workflows.AirlockOnboarded || len(res.Outcome.ToolIDs) != 1 ||
		res.Outcome.ToolIDs[0] != other.Slug+".list_pets" {
		t.Fatalf("approve the other: HTTP %d %+v, its review showed %s", code, res.Outcome, other.Slug)
	}
}
