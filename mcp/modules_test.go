package mcp_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/mcp"
	"github.com/toolsmith/toolsmith/tool"
)

// TestModulesAsModuleOfNamesThem: a tool that names no module (an
// onboarded wrapper such as pet_clinic.list_pets) belongs to its id's
// namespace, as for a module-limited caller, so kb.list_collections counts
// it under pet_clinic, and tools/list shows it to a caller limited to
// pet_clinic. Both left the wrappers out: the listing read the stored
// module, and the catalogue's visibility rule kept the module but not the
// id it falls back to.
func TestModulesAsModuleOfNamesThem(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	for id, module := range map[string]string{"pet_clinic.list_pets": "", "pet_clinic.get_pet": "", "currency.convert": "currency", "bare": ""} {
		man := `{"toolId": "` + id + `", "inputSchema": {"type": "object"}}`
		if _, err := st.UpsertTool(ctx, graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Verb: "DO", Name: id, Status: graph.StatusActive,
			Permissions: []string{"public"}, Module: module}, Embedding: []float32{1, 0}, Manifest: json.RawMessage(man)}); err != nil {
			t.Fatal(err)
		}
	}
	edge := mcp.New(mcp.Deps{Auth: &identity.Authenticator{Keys: identity.NewKeyService(st)}, Store: st})
	if n, err := edge.LoadCatalogue(ctx); err != nil || n != 4 {
		t.Fatalf("loaded %d: %v", n, err)
	}
	srv := httptest.NewServer(edge.Handler())
	defer srv.Close()

	text, isErr := callTool(t, srv.URL, http.Header{}, "kb.list_collections", map[string]any{"kind": "modules"})
	var out struct {
		Modules map[string]int `json:"modules"`
	}
	if isErr || json.Unmarshal([]byte(text), &out) != nil {
		t.Fatalf("kb.list_collections: %v %s", isErr, text)
	}
	if want := map[string]int{"pet_clinic": 2, "currency": 1}; !maps.Equal(out.Modules, want) {
		t.Errorf("kb.list_collections modules = %v, want %v", out.Modules, want)
	}

	names := listTools(t, srv.URL, http.Header{identity.HeaderAllowedModules: {"pet_clinic"}})
	for id, want := range map[string]bool{"pet_clinic.list_pets": true, "pet_clinic.get_pet": true, "currency.convert": false, "bare": false} {
		if got := slices.Contains(names, tool.FunctionName(id)); got != want {
			t.Errorf("tools/list limited to pet_clinic lists %s: %v, want %v (%v)", id, got, want, names)
		}
	}
}
