package graphtest

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/toolsmith/toolsmith/graph"
)

// Dim is the embedding dimension the suite records.
const Dim = 8

// Model is the embedder name the suite records.
const Model = "graphtest-hand-made"

// unit returns the basis vector e_i of dimension Dim.
func unit(i int) []float32 {
	v := make([]float32, Dim)
	v[i%Dim] = 1
	return v
}

// mix returns the normalised a*e_i + b*e_j.
func mix(i int, a float32, j int, b float32) []float32 {
	v := make([]float32, Dim)
	v[i] += a
	v[j] += b
	return graph.Normalize(v)
}

// fresh opens a store and records the suite's embedder.
func fresh(t *testing.T, open func(t *testing.T) graph.Store) graph.Store {
	t.Helper()
	s := open(t)
	if err := s.EnsureEmbedder(context.Background(), graph.EmbedderInfo{Model: Model, Dimension: Dim}); err != nil {
		t.Fatalf("EnsureEmbedder: %v", err)
	}
	return s
}

// mk builds a tool with sensible defaults; opts adjust it.
func mk(id, verb, name, category, desc string, vec []float32, opts ...func(*graph.Tool)) graph.Tool {
	t := graph.Tool{
		ToolSummary: graph.ToolSummary{
			ID: id, Verb: verb, Name: name, Category: category,
			ShortDescription: desc, Tags: []string{}, Groups: []string{"default"},
			Permissions: []string{"public"}, RequiredParams: []string{}, OptionalParams: []string{},
		},
		Description: desc,
		Embedding:   vec,
	}
	for _, o := range opts {
		o(&t)
	}
	if t.Manifest == nil {
		m, _ := json.Marshal(map[string]any{"toolId": t.ID, "verb": t.Verb, "name": t.Name, "description": t.Description})
		t.Manifest = m
	}
	return t
}

func tags(ts ...string) func(*graph.Tool) { return func(t *graph.Tool) { t.Tags = ts } }
func module(m string) func(*graph.Tool)   { return func(t *graph.Tool) { t.Module = m } }
func status(s string) func(*graph.Tool)   { return func(t *graph.Tool) { t.Status = s } }
func useCases(u ...string) func(*graph.Tool) {
	return func(t *graph.Tool) { t.UseCases = u }
}
func entities(e ...graph.EntityRef) func(*graph.Tool) {
	return func(t *graph.Tool) { t.Entities = e }
}
func relations(r ...graph.Relation) func(*graph.Tool) {
	return func(t *graph.Tool) { t.Relations = r }
}
func groups(g ...string) func(*graph.Tool) { return func(t *graph.Tool) { t.Groups = g } }

// put upserts tools or fails the test.
func put(t *testing.T, s graph.Store, tools ...graph.Tool) {
	t.Helper()
	for _, tl := range tools {
		if _, err := s.UpsertTool(context.Background(), tl); err != nil {
			t.Fatalf("UpsertTool(%q): %v", tl.ID, err)
		}
	}
}

// ids returns the tool ids of hits in order.
func ids(hits []graph.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Tool.ID
	}
	return out
}

func summaryIDs(items []graph.ToolSummary) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func approx(a, b, eps float64) bool { return math.Abs(a-b) <= eps }

// jsonEqual compares two JSON documents semantically.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}
