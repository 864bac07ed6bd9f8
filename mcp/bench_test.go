package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/mcp"
)

// BenchmarkCatalogueMemory measures what the MCP registry holds for a
// catalogue of 10,000 tools (each exposed as an MCP tool with its input
// schema): the live heap after LoadCatalogue minus before, in MB (the
// bound is < 10 MB), and the time to load it.
func BenchmarkCatalogueMemory(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "g.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := st.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: "bench", Dimension: 8}); err != nil {
		b.Fatal(err)
	}
	const n = 10000
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("api%03d.operation_%05d", i%300, i)
		man, _ := json.Marshal(map[string]any{"toolId": id, "verb": "DO_THING", "name": "Operation " + id,
			"description": "Calls operation " + id + " of a realistic API with a few typed parameters.", "category": "bench",
			"inputSchema": map[string]any{"type": "object", "required": []string{"id"}, "properties": map[string]any{
				"id": map[string]any{"type": "string", "description": "the resource id"}, "limit": map[string]any{"type": "integer"},
				"verbose": map[string]any{"type": "boolean"}}}})
		vec := make([]float32, 8)
		vec[i%8] = 1
		if _, err := st.UpsertTool(ctx, graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Verb: "DO_THING", Name: "Operation " + id,
			ShortDescription: "Calls operation " + id, Category: "bench", Status: graph.StatusActive}, Description: "Calls operation " + id,
			Embedding: vec, Manifest: man}); err != nil {
			b.Fatal(err)
		}
	}
	var edge *mcp.Edge
	var before, after runtime.MemStats
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		edge = nil
		runtime.GC()
		runtime.ReadMemStats(&before)
		edge = mcp.New(mcp.Deps{Store: st})
		loaded, err := edge.LoadCatalogue(ctx)
		if err != nil || loaded != n {
			b.Fatalf("loaded %d: %v", loaded, err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
	}
	b.StopTimer()
	runtime.KeepAlive(edge)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "registry-MB")
}
