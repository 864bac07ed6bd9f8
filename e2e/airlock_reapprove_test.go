package e2e

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/workflows"
)

// Through REST, Temporal and real wrapper builds: a
// spec is approved with two operations, a new version at the same
// location is scanned and approved with one; the tool it leaves out is
// deprecated with a reason naming the approval and cannot be called, and
// the tool it keeps runs.
func TestAirlockReapprovalWithFewerOperationsDeprecatesTheRest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds wrappers")
	}
	e := airlockEnv(t, time.Hour)
	v1, err := os.ReadFile("../codegen/testdata/petstore/spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	v1 = append(v1, []byte("\n# "+t.Name()+"\n")...)
	v2 := bytes.Replace(v1, []byte("version: 2.1.0"), []byte("version: 2.2.0"), 1)
	var current atomic.Pointer[[]byte]
	current.Store(&v1)
	specs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(*current.Load()) }))
	defer specs.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"id": "rex-1", "name": "Rex", "species": "dog"}]`))
	}))
	defer api.Close()
	approve := func(review string, ops ...string) workflows.AirlockOutcome {
		t.Helper()
		var res struct {
			Outcome workflows.AirlockOutcome `json:"outcome"`
		}
		code := e.post("/api/v1/tools/pending/"+review+"/approve?wait=5m", map[string]any{"policy": map[string]any{
			"baseUrl": api.URL + "/v1", "operations": ops}}, &res)
		if code != http.StatusOK || res.Outcome.Status != workflows.AirlockOnboarded {
			t.Fatalf("approve %s: HTTP %d %+v", review, code, res.Outcome)
		}
		return res.Outcome
	}

	first := approve(e.scan(t, specs.URL+"/pets.yaml"), "listPets", "deletePet")
	if len(first.ToolIDs) != 2 {
		t.Fatalf("first approval: %+v", first)
	}

	// The new version: a scan of every source opens its review.
	current.Store(&v2)
	var started struct {
		ScanWorkflowID string `json:"scanWorkflowId"`
	}
	if code := e.post("/api/v1/tools/sources/scan", nil, &started); code != http.StatusAccepted {
		t.Fatalf("scan: HTTP %d", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var scan workflows.ScanOutput
	if err := e.client.GetWorkflow(ctx, started.ScanWorkflowID, "").Get(ctx, &scan); err != nil || len(scan.Reviews) != 1 {
		t.Fatalf("rescan: %+v %v", scan, err)
	}
	second := approve(scan.Reviews[0], "listPets")
	if len(second.ToolIDs) != 1 || second.ToolIDs[0] != "pet_clinic.list_pets" ||
		!strings.Contains(strings.Join(second.Warnings, " "), "deprecated pet_clinic.delete_pet: not in approval "+scan.Reviews[0]) {
		t.Fatalf("second approval: %+v", second)
	}

	gone, err := e.store.GetTool(ctx, "pet_clinic.delete_pet")
	if err != nil || gone.Status != graph.StatusDeprecated {
		t.Fatalf("left-out tool: %+v %v", gone.ToolSummary, err)
	}
	user := bearer(e.key(identity.NewKey{Owner: "ana", Level: "user"}))
	var exec struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
	}
	if code := e.do(http.MethodPost, "/api/v1/tools/pet_clinic.delete_pet/execute", map[string]any{"inputs": map[string]any{"petId": "rex-1"}}, user, &exec); code != http.StatusNotFound {
		t.Fatalf("call of the left-out tool: HTTP %d %+v, want 404", code, exec)
	}
	if code := e.do(http.MethodPost, "/api/v1/tools/pet_clinic.list_pets/execute?wait=60s", map[string]any{"inputs": map[string]any{}}, user, &exec); code != 200 || exec.Status != "completed" {
		t.Fatalf("call of the kept tool: HTTP %d %+v", code, exec)
	}
}
