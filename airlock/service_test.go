package airlock

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/codegen"
	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/tool"
)

type fakeRegistrar struct{ got []tool.Manifest }

func (f *fakeRegistrar) RegisterManifests(_ context.Context, ms []tool.Manifest) ([]string, error) {
	f.got = append(f.got, ms...)
	ids := make([]string, len(ms))
	for i, m := range ms {
		if err := tool.Validate(&m); err != nil {
			return nil, err
		}
		ids[i] = m.ToolID
	}
	return ids, nil
}

func (f *fakeRegistrar) RetireTools(context.Context, string, []string, string) ([]string, error) {
	return nil, nil
}

func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "g.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	emb := hashing.New(64)
	if err := s.EnsureEmbedder(context.Background(), graph.EmbedderInfo{Model: emb.Name(), Dimension: emb.Dimension()}); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestScanReviewApproveExecute runs the airlock's domain path without
// Temporal: a source served over HTTP is scanned into definitions, the spec
// is reviewed, approved (wrapper generated, built, tested, tools
// registered), and an onboarded tool is executed against a fake of the API.
func TestScanReviewApproveExecute(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go program; skipped with -short")
	}
	pets, err := os.ReadFile(petstore)
	if err != nil {
		t.Fatal(err)
	}
	specSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(pets) }))
	defer specSrv.Close()
	ctx := context.Background()
	store := openStore(t)
	files := &Files{Root: t.TempDir()}
	sc := &Scanner{Fetcher: &Fetcher{}, Files: files, Definitions: store, Embedder: hashing.New(64)}
	if err := store.PutSource(ctx, graph.Source{ID: "pets", Type: SourceOpenAPI, Location: specSrv.URL + "/pets.yaml"}); err != nil {
		t.Fatal(err)
	}
	rep, err := sc.Scan(ctx, "pets")
	if err != nil || len(rep.New) != 1 || rep.Definitions != 4 {
		t.Fatalf("first scan: %+v %v", rep, err)
	}
	again, err := sc.Scan(ctx, "pets")
	if err != nil || len(again.New) != 0 || again.Known != 1 {
		t.Fatalf("second scan must skip the known spec: %+v %v", again, err)
	}
	src, _ := store.GetSource(ctx, "pets")
	if src.Specs != 1 || src.LastScannedAt.IsZero() {
		t.Fatalf("source after scan: %+v", src)
	}
	vec, _ := hashing.New(64).EmbedQuery(ctx, "create a pet")
	hits, err := store.SearchDefinitions(ctx, vec, 1, nil)
	if err != nil || len(hits) != 1 || hits[0].Definition.Slug != "pet_clinic" {
		t.Fatalf("definitions search: %+v %v", hits, err)
	}

	hash := rep.New[0]
	data, err := files.Spec(context.Background(), hash)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := codegen.Normalise(ctx, data)
	review := BuildReview(n, hash, src.Location)
	if review.Title != "Pet Clinic" || len(review.Operations) != 4 || review.Servers[0] != "https://pets.example.com/{stage}" {
		t.Fatalf("review: %+v", review)
	}

	// The "real" API the wrapper will call once approved.
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet && r.URL.Path == "/v1/pets" {
			_, _ = w.Write([]byte(`[{"id": "rex-1", "name": "Rex", "species": "dog"}]`))
			return
		}
		w.WriteHeader(http.StatusTeapot)
	}))
	defer api.Close()
	ob := testOnboarder(t, ctx)
	reg := &fakeRegistrar{}
	onb := &Onboarding{Onboarder: ob, Files: files, Definitions: store, Registrar: reg}
	res, err := onb.Approve(ctx, "airlock-test", hash, src.Location, Policy{BaseURL: api.URL + "/v1", QuotaPerDay: 10, Operations: []string{"listPets"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Outcome.OK() || len(res.ToolIDs) != 1 || res.ToolIDs[0] != "pet_clinic.list_pets" {
		t.Fatalf("approve: %+v", res)
	}
	defs, _ := store.SpecDefinitions(ctx, hash)
	if defs[0].Status != graph.DefinitionOnboarded {
		t.Fatalf("definitions after onboarding: %s", defs[0].Status)
	}
	a, err := files.Approval("pet_clinic")
	if err != nil || a.Policy.QuotaPerDay != 10 {
		t.Fatalf("approval: %+v %v", a, err)
	}
	ex := &Executor{Ledger: &MemoryLedger{}}
	out, err := ex.Execute(ctx, a, "list_pets", map[string]any{"limit": 5}, access.Caller{})
	if err != nil || !out.Success {
		t.Fatalf("execute: %+v %v", out, err)
	}
	var pets2 []map[string]any
	if err := json.Unmarshal(out.Result, &pets2); err != nil || pets2[0]["name"] != "Rex" {
		t.Fatalf("result: %s", out.Result)
	}
	bad, _ := ex.Execute(ctx, a, "list_pets", map[string]any{"limit": 0}, access.Caller{})
	if bad.Success || !strings.Contains(bad.Error, "invalid arguments") {
		t.Fatalf("invalid input through the built wrapper: %+v", bad)
	}
}
