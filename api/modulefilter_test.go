package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
)

// TestModuleFilterIsTheModuleLimit: GET /api/v1/tools?module=pet_clinic
// lists the tools a caller limited to pet_clinic (X-Allowed-Modules) sees,
// the onboarded wrappers that name no module included: both read a tool's
// module as access.ModuleOf names it. The filter matched the stored module
// only, and so listed none of them. The console's module filter reads the
// same store filter.
func TestModuleFilterIsTheModuleLimit(t *testing.T) {
	srv, _, st := fullServer(t)
	h := srv.Handler()
	ctx := context.Background()
	for id, module := range map[string]string{"pet_clinic.list_pets": "", "pet_clinic.get_pet": "", "pet_clinic.add_pet": "",
		"pet_clinic.delete_pet": "", "currency.convert": "currency", "pet_shop.sell": "pet_clinic"} {
		if _, err := st.UpsertTool(ctx, graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Verb: "DO", Name: id, Category: "pets",
			Status: graph.StatusActive, Permissions: []string{"public"}, Module: module},
			Embedding: make([]float32, 64), Manifest: json.RawMessage(`{"toolId": "` + id + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"pet_clinic.add_pet", "pet_clinic.delete_pet", "pet_clinic.get_pet", "pet_clinic.list_pets", "pet_shop.sell"}
	list := func(path string, hdr http.Header) []string {
		t.Helper()
		req := httptest.NewRequest("GET", path, nil)
		req.Header = hdr
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var page struct {
			Data struct {
				Items []graph.ToolSummary `json:"items"`
			} `json:"data"`
		}
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &page) != nil {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
		var got []string
		for _, it := range page.Data.Items {
			got = append(got, it.ID)
		}
		slices.Sort(got)
		return got
	}
	limited := http.Header{identity.HeaderAllowedModules: {"pet_clinic"}}
	for _, c := range []struct {
		path string
		hdr  http.Header
	}{
		{"/api/v1/tools?module=pet_clinic", http.Header{}},
		{"/api/v1/tools?module=pet_clinic&sort=uses", http.Header{}},
		{"/api/v1/tools", limited},
		{"/api/v1/tools?module=pet_clinic", limited},
	} {
		if got := list(c.path, c.hdr); !slices.Equal(got, want) {
			t.Errorf("%s (%v) = %v, want %v", c.path, c.hdr, got, want)
		}
	}
	if got := list("/api/v1/tools?module=currency", limited); len(got) != 0 {
		t.Errorf("module=currency limited to pet_clinic = %v, want none", got)
	}

	req := httptest.NewRequest("GET", "/ui/tools?module=pet_clinic", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	for _, id := range append(want, "currency.convert") {
		if shown, wantShown := strings.Contains(rec.Body.String(), id), slices.Contains(want, id); shown != wantShown {
			t.Errorf("console /ui/tools?module=pet_clinic (%d) shows %s: %v, want %v", rec.Code, id, shown, wantShown)
		}
	}
}
