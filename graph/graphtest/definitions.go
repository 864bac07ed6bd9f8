package graphtest

import (
	"errors"
	"testing"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// testDefinitions covers graph.Definitions: sources, the atomic replacement
// of a spec's definitions, statuses, and vector search over definitions.
func testDefinitions(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	var d graph.Definitions = s
	if _, err := d.GetSource(ctx, "nope"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("GetSource(missing): %v", err)
	}
	src := graph.Source{ID: "src1", Type: "openapi", Location: "https://specs.example/pets.yaml"}
	if err := d.PutSource(ctx, src); err != nil {
		t.Fatal(err)
	}
	if err := d.PutSource(ctx, graph.Source{ID: "bad"}); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("PutSource without type/location: %v", err)
	}
	src.Specs, src.LastError = 1, "one spec failed"
	if err := d.PutSource(ctx, src); err != nil {
		t.Fatal(err)
	}
	got, err := d.GetSource(ctx, "src1")
	if err != nil || got.Specs != 1 || got.LastError != "one spec failed" || got.CreatedAt.IsZero() {
		t.Fatalf("GetSource: %+v %v", got, err)
	}
	defs := []graph.Definition{
		{ID: "h1:list_pets", Name: "list_pets", API: "Pets", Method: "GET", Path: "/pets", Description: "List pets", Embedding: unit(0)},
		{ID: "h1:book_flight", Name: "book_flight", API: "Pets", Method: "POST", Path: "/flights", Description: "Book a flight", Embedding: unit(1)},
	}
	if err := d.PutDefinitions(ctx, "src1", "h1", defs); err != nil {
		t.Fatal(err)
	}
	wrongDim := []graph.Definition{{ID: "h2:x", Embedding: []float32{1}}}
	if err := d.PutDefinitions(ctx, "src1", "h2", wrongDim); !errors.Is(err, graph.ErrDimension) {
		t.Fatalf("wrong dimension: %v", err)
	}
	hits, err := d.SearchDefinitions(ctx, unit(1), 5, nil)
	if err != nil || len(hits) != 2 || hits[0].Definition.ID != "h1:book_flight" || hits[0].Score < 0.99 {
		t.Fatalf("SearchDefinitions: %+v %v", hits, err)
	}
	if hits[0].Definition.SourceID != "src1" || hits[0].Definition.SpecHash != "h1" || hits[0].Definition.Status != graph.DefinitionAvailable {
		t.Fatalf("hit fields: %+v", hits[0].Definition)
	}
	// Replacing the spec's definitions drops the ones no longer listed.
	if err := d.PutDefinitions(ctx, "src1", "h1", defs[:1]); err != nil {
		t.Fatal(err)
	}
	list, err := d.SpecDefinitions(ctx, "h1")
	if err != nil || len(list) != 1 || list[0].ID != "h1:list_pets" {
		t.Fatalf("SpecDefinitions after replace: %+v %v", list, err)
	}
	if err := d.SetSpecStatus(ctx, "h1", graph.DefinitionPending); err != nil {
		t.Fatal(err)
	}
	if err := d.SetSpecStatus(ctx, "h1", "bogus"); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("bad status: %v", err)
	}
	if err := d.SetSpecStatus(ctx, "zz", graph.DefinitionPending); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("unknown spec: %v", err)
	}
	if hits, _ := d.SearchDefinitions(ctx, unit(0), 5, []string{graph.DefinitionAvailable}); len(hits) != 0 {
		t.Fatalf("pending definitions must not match an available-only search: %+v", hits)
	}
	if hits, _ := d.SearchDefinitions(ctx, unit(0), 5, nil); len(hits) != 1 {
		t.Fatalf("default search covers pending: %+v", hits)
	}
	// Deleting the source keeps definitions under review.
	if err := d.PutDefinitions(ctx, "src1", "h3", []graph.Definition{{ID: "h3:a", Embedding: unit(2)}}); err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteSource(ctx, "src1"); err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteSource(ctx, "src1"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if l, _ := d.SpecDefinitions(ctx, "h3"); len(l) != 0 {
		t.Fatalf("available definitions of a deleted source remain: %+v", l)
	}
	if l, _ := d.SpecDefinitions(ctx, "h1"); len(l) != 1 {
		t.Fatalf("pending definitions of a deleted source must stay: %+v", l)
	}
	srcs, err := d.Sources(ctx)
	if err != nil || len(srcs) != 0 {
		t.Fatalf("Sources after delete: %+v %v", srcs, err)
	}
}
