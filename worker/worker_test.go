package worker

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/demo"
	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/internal/demomodule"
	"github.com/toolsmith/toolsmith/modules"
	"github.com/toolsmith/toolsmith/registry"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/workflows"
)

// system wires the real pieces: SQLite store with the demo catalogue, the
// hashing embedder, the store searcher, the registry and the demo modules.
func system(t *testing.T) (Deps, map[string]*demomodule.Module, *sqlite.Store) {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "graph.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	emb := hashing.New(0)
	svc := registry.New(store, emb)
	if _, err := demo.Load(ctx, svc, io.Discard); err != nil {
		t.Fatal(err)
	}
	mux, mods := demomodule.Mux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	cfg := modules.NewConfig()
	for _, n := range demomodule.Names() {
		if err := cfg.Add(n + "=" + srv.URL + "/" + n); err != nil {
			t.Fatal(err)
		}
	}
	return Deps{
		Store:    store,
		Searcher: activities.StoreSearcher{Store: store, Embedder: emb},
		Router:   modules.NewRouter(cfg, modules.WithRegistrar(RegistryRegistrar(svc))),
	}, mods, store
}

func env(t *testing.T, deps Deps) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	e := s.NewTestWorkflowEnvironment()
	e.SetTestTimeout(30 * time.Second)
	Register(e, deps)
	return e
}

func TestSubstituteOverRealStore(t *testing.T) {
	deps, mods, _ := system(t)
	e := env(t, deps)
	e.ExecuteWorkflow(workflows.NovelVerbWorkflow, workflows.NovelVerbInput{
		Verb: "CONVERT_CURRENCY", Description: "convert an amount of money from US dollars to euros",
		Inputs: map[string]any{"amount": 250, "from": "USD", "to": "EUR"},
		// The hashing embedder's similarities are lower than USE-lite's, on
		// which the default threshold is calibrated.
		Options: workflows.NovelVerbOptions{Threshold: 0.3},
	})
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res workflows.NovelVerbResult
	if err := e.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Branch != workflows.BranchSubstitute || res.Tools[0] != "currency.convert" {
		t.Fatalf("branch %q tools %v scores %+v", res.Branch, res.Tools, res.Scores)
	}
	if out := res.Output.(map[string]any); out["converted"] != 230.35 {
		t.Fatalf("output = %v", out)
	}
	if mods["currency"].Executions("") != 1 {
		t.Fatalf("currency module executions = %d", mods["currency"].Executions(""))
	}
}

// TestSubstituteThroughRetrieval runs the substitute branch with the hybrid
// retrieval service as the searcher: the threshold applies to the raw
// semantic signal, not to the fused score.
func TestSubstituteThroughRetrieval(t *testing.T) {
	deps, _, store := system(t)
	svc := retrieval.New(store, hashing.New(0), retrieval.Options{})
	deps.Searcher = activities.RetrievalSearcher{Service: svc}
	e := env(t, deps)
	e.ExecuteWorkflow(workflows.NovelVerbWorkflow, workflows.NovelVerbInput{
		Verb: "CONVERT_UNITS", Description: "convert a distance in miles to kilometres",
		Inputs:  map[string]any{"value": 10, "from_unit": "mi", "to_unit": "km"},
		Options: workflows.NovelVerbOptions{Threshold: 0.3},
	})
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res workflows.NovelVerbResult
	_ = e.GetWorkflowResult(&res)
	if res.Branch != workflows.BranchSubstitute || res.Tools[0] != "units.convert" {
		t.Fatalf("branch %q tools %v scores %+v", res.Branch, res.Tools, res.Scores)
	}
	if s := res.Scores[0].Similarity; s <= 0 || s >= 1 {
		t.Fatalf("similarity %v is not a cosine", s)
	}
	if got := res.Output.(map[string]any)["value"]; got != 16.093 {
		t.Fatalf("value = %v", got)
	}
}

func TestExecuteToolWorkflowOverRealStore(t *testing.T) {
	deps, mods, store := system(t)
	e := env(t, deps)
	e.ExecuteWorkflow(workflows.ExecuteToolWorkflow, workflows.ExecuteToolInput{
		ToolID: "units.convert", Inputs: map[string]any{"value": 26.2, "from_unit": "mi", "to_unit": "km"},
	})
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var out workflows.ExecuteToolResult
	_ = e.GetWorkflowResult(&out)
	if got := out.Output.(map[string]any)["value"]; got != 42.165 {
		t.Fatalf("value = %v", got)
	}
	if mods["units"].Executions("") != 1 {
		t.Fatal("units module not called once")
	}
	u, err := store.Usage(context.Background(), []string{"units.convert"})
	if err != nil || u["units.convert"].Successes != 1 {
		t.Fatalf("usage = %+v, %v", u, err)
	}
}

func TestRefreshModulesRegistersDiscoveredTools(t *testing.T) {
	deps, _, store := system(t)
	ctx := context.Background()
	if _, err := store.GetTool(ctx, "text.stats"); err == nil {
		t.Fatal("text.stats is in the catalogue; the test needs a module-only tool")
	}
	e := env(t, deps)
	e.ExecuteWorkflow(workflows.RefreshModulesWorkflow)
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var out workflows.RefreshModulesResult
	_ = e.GetWorkflowResult(&out)
	registered := 0
	for _, r := range out.Reports {
		if r.Error != "" || len(r.ToolErrors) > 0 {
			t.Fatalf("report %+v", r)
		}
		registered += r.Registered
	}
	if registered != 8 {
		t.Fatalf("registered %d tools, want 8: %+v", registered, out.Reports)
	}
	got, err := store.GetTool(ctx, "text.stats")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Module string `json:"module"`
	}
	_ = json.Unmarshal(got.Manifest, &m)
	if m.Module != "text" {
		t.Fatalf("manifest module %q", m.Module)
	}
	// A second refresh finds everything unchanged and still succeeds.
	e2 := env(t, deps)
	e2.ExecuteWorkflow(workflows.RefreshModulesWorkflow)
	if err := e2.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
}

func TestNewRegistersOnAWorker(t *testing.T) {
	c, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if w := New(c, Deps{}); w == nil {
		t.Fatal("nil worker")
	}
}
