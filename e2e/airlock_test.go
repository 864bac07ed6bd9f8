package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/airlock/review"
	apiairlock "github.com/toolsmith/toolsmith/api/airlock"
	"github.com/toolsmith/toolsmith/api/verbs"
	"github.com/toolsmith/toolsmith/codegen"
	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/registry"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/templates"
	"github.com/toolsmith/toolsmith/tool"
	"github.com/toolsmith/toolsmith/worker"
	"github.com/toolsmith/toolsmith/workflows"
)

// airlockEnv extends env with the airlock: files, scanner, onboarding
// (real wrapper builds), the wrapper runtime, and the airlock routes.
func airlockEnv(t *testing.T, reviewTimeout time.Duration) *env {
	t.Helper()
	e := newEnv(t)
	ctx := context.Background()
	emb := hashing.New(embedDim)
	reg := registry.New(e.store, emb, registry.WithOnChange(retrieval.New(e.store, emb, retrieval.Options{}).Invalidate))
	reqs, err := codegen.BuildRequires(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	gen, err := codegen.New(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	files := &airlock.Files{Root: filepath.Join(t.TempDir(), "airlock")}
	e.airlockFiles = files
	e.stopWorker()
	e.deps.Airlock = &activities.Airlock{
		Scanner: &airlock.Scanner{Fetcher: &airlock.Fetcher{}, Files: files, Definitions: e.store, Embedder: emb},
		Onboarding: &airlock.Onboarding{Onboarder: &airlock.Onboarder{Generator: gen, Requires: reqs,
			Validate: func(m *tool.Manifest) error { tool.Normalize(m); return tool.Validate(m) }},
			Files: files, Definitions: e.store, Registrar: airlock.RegistryRegistrar{Registry: reg}},
		Files:       files,
		Definitions: e.store,
		Reviews:     worker.Reviews(e.client, e.queue, reviewTimeout),
		Gaps:        e.store,
	}
	e.deps.Wrapped = &airlock.Runtime{Files: files, Executor: &airlock.Executor{Ledger: &airlock.MemoryLedger{}}}
	e.startWorker()

	e.serve(verbs.New(e.client, e.store, verbs.Config{TaskQueue: e.queue, Namespace: server.Namespace()}),
		apiairlock.New(review.New(e.client, e.store, review.Config{TaskQueue: e.queue, Namespace: server.Namespace(), ReviewTimeout: reviewTimeout})))
	return e
}

// serveFile serves a spec made unique to the test (a YAML/JSON-neutral
// trailing newline count differs per test), so that reviews, whose
// workflow IDs derive from the spec's content, never collide across tests
// sharing the server.
func serveFile(t *testing.T, path string) *httptest.Server {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, []byte(strings.Repeat("\n", 1+len(t.Name())%7)+strings.Repeat(" ", len(t.Name())))...)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(data) }))
	t.Cleanup(srv.Close)
	return srv
}

// scan registers a source and waits for its scan; it returns the review id.
func (e *env) scan(t *testing.T, location string) string {
	t.Helper()
	var added struct {
		ScanWorkflowID string `json:"scanWorkflowId"`
	}
	if code := e.post("/api/v1/tools/sources", map[string]any{"type": "openapi", "location": location}, &added); code != http.StatusCreated {
		t.Fatalf("add source: HTTP %d", code)
	}
	var scan workflows.ScanOutput
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.client.GetWorkflow(ctx, added.ScanWorkflowID, "").Get(ctx, &scan); err != nil {
		t.Fatalf("scan: %v", err)
	}
	if len(scan.Reviews) != 1 {
		t.Fatalf("scan opened %d reviews: %+v", len(scan.Reviews), scan)
	}
	return scan.Reviews[0]
}

func TestAirlockSourceToSubstitutionThroughPolicies(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wrapper")
	}
	e := airlockEnv(t, time.Hour)
	specs := serveFile(t, "../codegen/testdata/petstore/spec.yaml")
	var apiCalls int
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apiCalls++
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet && r.URL.Path == "/v1/pets" {
			_, _ = w.Write([]byte(`[{"id": "rex-1", "name": "Rex", "species": "dog"}]`))
			return
		}
		w.WriteHeader(http.StatusTeapot)
	}))
	defer api.Close()

	review := e.scan(t, specs.URL+"/pets.yaml")
	var pending struct {
		Pending []struct {
			ID, Title, Status string
			Operations        int
		} `json:"pending"`
	}
	// The review lists at once; its summary follows when it is prepared.
	eventually(t, 30*time.Second, func() error {
		code := e.do(http.MethodGet, "/api/v1/tools/pending", nil, nil, &pending)
		if code == 200 && len(pending.Pending) == 1 && pending.Pending[0].Status == workflows.AirlockPending {
			return nil
		}
		return fmt.Errorf("pending: HTTP %d %+v", code, pending)
	})
	if p := pending.Pending[0]; p.ID != review || p.Title != "Pet Clinic" || p.Operations != 4 {
		t.Fatalf("pending review: %+v", p)
	}
	// Not yet a tool: definitions are searchable, never executable.
	if _, err := e.store.GetTool(context.Background(), "pet_clinic.list_pets"); err == nil {
		t.Fatal("a pending spec's operation is already a tool")
	}

	var approved struct {
		Outcome workflows.AirlockOutcome `json:"outcome"`
	}
	code := e.post("/api/v1/tools/pending/"+review+"/approve?wait=5m", map[string]any{"policy": map[string]any{
		"baseUrl": api.URL + "/v1", "quotaPerDay": 2, "operations": []string{"listPets"},
	}}, &approved)
	if code != http.StatusOK || approved.Outcome.Status != workflows.AirlockOnboarded || len(approved.Outcome.ToolIDs) != 1 {
		t.Fatalf("approve: HTTP %d %+v", code, approved.Outcome)
	}
	tl, err := e.store.GetTool(context.Background(), "pet_clinic.list_pets")
	if err != nil || tl.Status != graph.StatusActive {
		t.Fatalf("onboarded tool: %+v %v", tl.ToolSummary, err)
	}

	// A novel verb now substitutes to the onboarded tool, which runs through
	// its wrapper against the approved host.
	user := bearer(e.key(identity.NewKey{Owner: "ana", Level: "user"}))
	var got struct {
		Status string                    `json:"status"`
		Result workflows.NovelVerbResult `json:"result"`
	}
	code = e.do(http.MethodPost, "/api/v1/verbs?wait=60s", map[string]any{
		"verb": "LIST_PETS", "description": "list the pets of the clinic", "inputs": map[string]any{"limit": 5},
		"options": map[string]any{"threshold": 0.3},
	}, user, &got)
	if code != 200 || got.Status != "completed" || got.Result.Branch != workflows.BranchSubstitute || got.Result.Tools[0] != "pet_clinic.list_pets" {
		t.Fatalf("fulfil LIST_PETS: HTTP %d %s %+v", code, got.Status, got.Result)
	}
	if pets, ok := got.Result.Output.([]any); !ok || len(pets) != 1 || apiCalls != 1 {
		t.Fatalf("output %v after %d API calls", got.Result.Output, apiCalls)
	}
	// The approval's daily quota of 2 allows one more call, then refuses.
	var exec struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
	}
	if code := e.do(http.MethodPost, "/api/v1/tools/pet_clinic.list_pets/execute", map[string]any{"inputs": map[string]any{}}, user, &exec); code != 200 || exec.Status != "completed" {
		t.Fatalf("second call: HTTP %d %+v", code, exec)
	}
	if code := e.do(http.MethodPost, "/api/v1/tools/pet_clinic.list_pets/execute", map[string]any{"inputs": map[string]any{}}, user, &exec); code != 200 || exec.ErrorType != activities.ErrTypePolicyRefused {
		t.Fatalf("third call over quota: HTTP %d %+v", code, exec)
	}
	if apiCalls != 2 {
		t.Fatalf("the API saw %d calls, want 2 (the refused one never leaves)", apiCalls)
	}
}

// TestAirlockReject waits an hour for a decision, so that a slow machine
// never lets the review time out before the reject arrives.
func TestAirlockReject(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the in-process server")
	}
	e := airlockEnv(t, time.Hour)
	specs := serveFile(t, "../codegen/testdata/swagger2/spec.json")
	review := e.scan(t, specs.URL+"/rates.json")
	// Two quick rejects: the review records the first and refuses the
	// second (409), rather than accepting it and dropping it.
	if code := e.post("/api/v1/tools/pending/"+review+"/reject", map[string]any{"reason": "rates must come from the treasury"}, nil); code != http.StatusAccepted {
		t.Fatalf("reject: HTTP %d", code)
	}
	if code := e.post("/api/v1/tools/pending/"+review+"/reject", map[string]any{"reason": "again"}, nil); code != http.StatusConflict {
		t.Fatalf("second reject: HTTP %d, want 409", code)
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer rcancel()
	var rejected workflows.AirlockOutcome
	if err := e.client.GetWorkflow(rctx, review, "").Get(rctx, &rejected); err != nil || rejected.Status != workflows.AirlockRejected ||
		rejected.Reason != "rates must come from the treasury" {
		t.Fatalf("reject: %+v %v", rejected, err)
	}
	page, err := e.store.ListTools(context.Background(), graph.ListQuery{Filter: graph.Filter{IDs: []string{"currency_rates.convert_amount", "currency_rates.get_rates_by_base"}}})
	if err != nil || len(page.Items) != 0 {
		t.Fatalf("a rejected spec became tools: %+v %v", page.Items, err)
	}
}

// TestAirlockTimeout: a review nobody decides ends cleanly after the
// review timeout, and its definitions become available again.
func TestAirlockTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the in-process server")
	}
	e := airlockEnv(t, 3*time.Second)
	other := serveFile(t, "../codegen/testdata/petstore/spec.yaml")
	review := e.scan(t, other.URL+"/pets.yaml")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out workflows.AirlockOutcome
	if err := e.client.GetWorkflow(ctx, review, "").Get(ctx, &out); err != nil || out.Status != workflows.AirlockTimedOut {
		t.Fatalf("timeout: %+v %v", out, err)
	}
	hits, err := e.store.SearchDefinitions(ctx, make([]float32, embedDim), 10, []string{graph.DefinitionAvailable})
	if err != nil || len(hits) == 0 {
		t.Fatalf("definitions after a timed-out review: %+v %v", hits, err)
	}
}
