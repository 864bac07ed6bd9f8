package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/mcp"
	"github.com/toolsmith/toolsmith/metrics"
	"github.com/toolsmith/toolsmith/registry"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/tool"
)

// deepManifest is a manifest whose input schema nests an array 1000 deep:
// registration refuses it now, but a store written before the bound may
// hold one.
func deepManifest(id string) tool.Manifest {
	schema := `{"type":"object","properties":{"a":` + strings.Repeat(`{"type":"array","items":`, 1000) + `{}` +
		strings.Repeat(`}`, 1000) + `}}`
	m := tool.Manifest{ToolID: id, Verb: "CONVERT_CURRENCY", Name: "Deep converter",
		Description: "Converts an amount of money from one currency to another.", Category: "finance",
		InputSchema: json.RawMessage(schema), OutputSchema: json.RawMessage(schema)}
	tool.Normalize(&m)
	return m
}

// TestCatalogueSkipsAStoredToolItCannotExpose: a tool stored past
// validation with a schema the MCP SDK refuses neither stops the
// catalogue from loading (the server from starting) nor breaks find_tools
// for the other tools its intents reach; the tool is left out of both.
func TestCatalogueSkipsAStoredToolItCannotExpose(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "g.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	emb := hashing.New(64)
	if err := st.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: emb.Name(), Dimension: emb.Dimension()}); err != nil {
		t.Fatal(err)
	}
	reg := registry.New(st, emb)
	good := `{"toolId":"currency.convert","verb":"CONVERT_CURRENCY","name":"Currency converter",
		"description":"Converts an amount of money from one currency to another.","category":"finance","module":"currency",
		"inputSchema":{"type":"object","properties":{"amount":{"type":"number"},"from":{"type":"string"},"to":{"type":"string"}}}}`
	if _, err := reg.Register(ctx, registry.Request{Manifest: json.RawMessage(good)}); err != nil {
		t.Fatal(err)
	}
	// The bad record goes straight to the store, as an older server let it.
	bad := deepManifest("legacy.deep")
	if err := tool.Validate(&bad); err == nil {
		t.Fatal("validation accepts a schema nested 1000 deep")
	}
	vecs, err := emb.EmbedDocuments(ctx, []string{tool.EmbeddingText(bad)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpsertTool(ctx, tool.ToGraph(bad, vecs[0])); err != nil {
		t.Fatal(err)
	}

	edge := mcp.New(mcp.Deps{Retrieval: retrieval.New(st, emb, retrieval.Options{}), Store: st, Metrics: metrics.New()})
	n, err := edge.LoadCatalogue(ctx)
	if err != nil || n != 1 {
		t.Fatalf("LoadCatalogue = %d, %v; want the one exposable tool", n, err)
	}
	if err := edge.ToolChanged(ctx, "legacy.deep"); !errors.Is(err, mcp.ErrNotExposed) {
		t.Fatalf("ToolChanged(the deep tool) = %v, want ErrNotExposed", err)
	}
	srv := httptest.NewServer(edge.Handler())
	defer srv.Close()

	names := listTools(t, srv.URL, nil)
	if !slices.Contains(names, tool.FunctionName("currency.convert")) || slices.Contains(names, tool.FunctionName("legacy.deep")) {
		t.Fatalf("tools/list = %v, want currency.convert's tool and not legacy.deep's", names)
	}

	c := sdk.NewClient(&sdk.Implementation{Name: "catalogue-test", Version: "test"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "find_tools",
		Arguments: map[string]any{"intent": "convert an amount of money from one currency to another", "limit": 10}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("find_tools failed: %v", res.Content)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out mcp.FindToolsOut
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ft := range out.Tools {
		ids = append(ids, ft.ToolID)
	}
	if !slices.Contains(ids, "currency.convert") || slices.Contains(ids, "legacy.deep") {
		t.Fatalf("find_tools found %v, want currency.convert and not legacy.deep", ids)
	}
}
