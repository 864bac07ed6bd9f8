package registry_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/registry"
)

// TestWithSQLiteStore runs the main paths against the real embedded store,
// including persistence across a reopen.
func TestWithSQLiteStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "g.db")
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	emb := &fakeEmbedder{dim: 16}
	svc := registry.New(st, emb)
	full := manifest("currency.convert",
		`"entities":[{"name":"Currency","type":"Concept"}]`,
		`"relationships":{"alternatives":["fx.convert"]}`)

	res, err := svc.Register(ctx, registry.Request{Manifest: full})
	if err != nil || !res.Created || res.Revision != 1 {
		t.Fatalf("Register: %+v %v", res, err)
	}
	if _, err := svc.Register(ctx, registry.Request{Manifest: manifest("currency.convert")}); !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("duplicate Register = %v", err)
	}
	if _, err := svc.Register(ctx, registry.Request{Manifest: manifest("currency.bad", `"verb":"x"`)}); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("invalid Register = %v", err)
	}
	items := svc.BatchRegister(ctx, []registry.Request{{Manifest: manifest("fx.convert")}, {Manifest: full}},
		registry.BatchOptions{Upsert: true})
	if items[0].Status != registry.StatusCreated || items[1].Status != registry.StatusUnchanged {
		t.Fatalf("batch: %+v", items)
	}
	if err := svc.Deprecate(ctx, "fx.convert", "test"); err != nil {
		t.Fatalf("Deprecate: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st, err = sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer st.Close()
	svc = registry.New(st, emb)
	got, err := svc.Get(ctx, "currency.convert")
	if err != nil || got.Verb != "CONVERT_CURRENCY" || len(got.Embedding) != 16 {
		t.Fatalf("Get after reopen: %+v %v", got.ToolSummary, err)
	}
	if _, err := svc.Get(ctx, "currency.bad"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("rejected tool was stored: %v", err)
	}
	page, err := svc.List(ctx, graph.ListQuery{Filter: graph.Filter{Statuses: []string{graph.StatusActive, graph.StatusDeprecated}}})
	if err != nil || len(page.Items) != 2 {
		t.Fatalf("List: %+v %v", page, err)
	}
	res, err = svc.Update(ctx, "currency.convert", registry.Request{Manifest: full})
	if err != nil || !res.Unchanged {
		t.Fatalf("identical Update after reopen: %+v %v", res, err)
	}
	hits, err := st.Related(ctx, "currency.convert", graph.RelAlternative, 5, graph.Filter{Statuses: []string{graph.StatusDeprecated}})
	if err != nil || len(hits) != 1 || hits[0].Tool.ID != "fx.convert" {
		t.Fatalf("Related: %+v %v", hits, err)
	}
}

// TestRegistrationClosesAGap: a tool registered for a verb nothing could
// fulfil closes that verb's gap and says so; a deprecated one does not.
func TestRegistrationClosesAGap(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t)
	svc := registry.New(st, &fakeEmbedder{dim: 16})
	for _, verb := range []string{"CONVERT_CURRENCY", "CONVERT_UNITS"} {
		if _, err := st.RecordGap(ctx, graph.GapEvent{Verb: verb}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := svc.Register(ctx, registry.Request{Manifest: manifest("fx.old", `"status":"deprecated"`, `"verb":"CONVERT_UNITS"`)})
	if err != nil || res.ClosedGap != "" {
		t.Fatalf("deprecated tool: %+v %v", res, err)
	}
	res, err = svc.Register(ctx, registry.Request{Manifest: manifest("fx.convert")})
	if err != nil || res.ClosedGap != "CONVERT_CURRENCY" || res.GapError != "" {
		t.Fatalf("register: %+v %v", res, err)
	}
	closed, err := st.ListGaps(ctx, graph.GapQuery{Status: graph.GapClosed})
	if err != nil || len(closed) != 1 || closed[0].ClosedBy != "fx.convert" {
		t.Fatalf("closed gaps: %+v %v", closed, err)
	}
	if open, _ := st.ListGaps(ctx, graph.GapQuery{Status: graph.GapOpen}); len(open) != 1 || open[0].Verb != "CONVERT_UNITS" {
		t.Fatalf("open gaps: %+v", open)
	}
}

// TestBatchRegistrationClosesAGap: tools written by one batch transaction
// close their verbs' gaps as a single registration does.
func TestBatchRegistrationClosesAGap(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t)
	svc := registry.New(st, &fakeEmbedder{dim: 16})
	for _, verb := range []string{"CONVERT_CURRENCY", "CONVERT_UNITS", "TRANSLATE_TEXT"} {
		if _, err := st.RecordGap(ctx, graph.GapEvent{Verb: verb}); err != nil {
			t.Fatal(err)
		}
	}
	res := svc.BatchRegister(ctx, []registry.Request{
		{Manifest: manifest("fx.convert")},
		{Manifest: manifest("units.convert", `"verb":"CONVERT_UNITS"`)},
		{Manifest: manifest("fx.old", `"verb":"TRANSLATE_TEXT"`, `"status":"deprecated"`)},
	}, registry.BatchOptions{})
	for _, r := range res {
		if r.Status == registry.StatusFailed {
			t.Fatalf("batch item: %+v", r)
		}
	}
	closed, err := st.ListGaps(ctx, graph.GapQuery{Status: graph.GapClosed})
	if err != nil || len(closed) != 2 {
		t.Fatalf("closed gaps after the batch: %+v %v", closed, err)
	}
	if open, _ := st.ListGaps(ctx, graph.GapQuery{Status: graph.GapOpen}); len(open) != 1 || open[0].Verb != "TRANSLATE_TEXT" {
		t.Fatalf("open gaps: %+v (a deprecated tool closes nothing)", open)
	}
}

// TestConcurrentBatchesOnSQLite runs overlapping batch registrations at once
// against the real store: every item settles (created, updated or
// unchanged, never failed), each tool is stored once, and the text index
// holds it once.
func TestConcurrentBatchesOnSQLite(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t)
	svc := registry.New(st, &fakeEmbedder{dim: 16})
	const batches, size, stride = 4, 50, 25 // neighbouring batches share 25 ids
	results := make([][]registry.ItemResult, batches)
	var wg sync.WaitGroup
	for b := range batches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var reqs []registry.Request
			for i := b * stride; i < b*stride+size; i++ {
				reqs = append(reqs, registry.Request{Manifest: manifest(fmt.Sprintf("bulk.t%03d", i))})
			}
			results[b] = svc.BatchRegister(ctx, reqs, registry.BatchOptions{Upsert: true})
		}()
	}
	wg.Wait()
	created := 0
	for b, res := range results {
		for _, r := range res {
			switch r.Status {
			case registry.StatusCreated:
				created++
			case registry.StatusUpdated, registry.StatusUnchanged:
			default:
				t.Errorf("batch %d item %d: %+v", b, r.Index, r)
			}
		}
	}
	want := (batches-1)*stride + size
	page, err := st.ListTools(ctx, graph.ListQuery{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != want || created != want {
		t.Fatalf("%d tools stored and %d created, want %d of each", page.Total, created, want)
	}
	hits, err := st.TextSearch(ctx, "converter", 1000, graph.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, h := range hits {
		if seen[h.Tool.ID] {
			t.Fatalf("%s twice in the text index", h.Tool.ID)
		}
		seen[h.Tool.ID] = true
	}
	if len(seen) != want {
		t.Fatalf("the text index holds %d tools, want %d", len(seen), want)
	}
}

// openSQLite opens a store in a temporary folder, closed when the test or
// benchmark ends.
func openSQLite(t testing.TB) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "g.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
