package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
)

// A key limited to some modules sees and runs only the tools of those
// modules: a tool without a module (an airlock wrapper such as
// xkcd.get_info_0_json) belongs to its namespace, so a currency-only key
// neither lists nor executes it, and an xkcd-only request does.
func TestModuleLimitedKeySeesOnlyItsModules(t *testing.T) {
	srv, keys, st := fullServer(t)
	h := srv.Handler()
	ctx := context.Background()
	for id, module := range map[string]string{"currency.convert": "currency", "xkcd.get_info_0_json": "", "units.convert": "units"} {
		if _, err := st.UpsertTool(ctx, graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Verb: "GET", Name: id, Category: "c",
			Status: graph.StatusActive, Module: module, Permissions: []string{"public"}}, Embedding: make([]float32, 64), Manifest: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	_, currencyKey, err := keys.Create(ctx, identity.Principal{}, identity.NewKey{Owner: "cur", Level: "user", Modules: []string{"currency"}})
	if err != nil {
		t.Fatal(err)
	}
	_, plainKey, err := keys.Create(ctx, identity.Principal{}, identity.NewKey{Owner: "all", Level: "user"})
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, key string, hdr map[string]string) (int, string) {
		req := httptest.NewRequest(method, path, strings.NewReader(`{"inputs":{}}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	for name, tc := range map[string]struct {
		key  string
		hdr  map[string]string
		want []string
	}{
		"currency key":    {currencyKey, nil, []string{"currency.convert"}},
		"currency header": {plainKey, map[string]string{identity.HeaderAllowedModules: "currency"}, []string{"currency.convert"}},
		"xkcd header":     {plainKey, map[string]string{identity.HeaderAllowedModules: "xkcd"}, []string{"xkcd.get_info_0_json"}},
		"not limited":     {plainKey, nil, []string{"currency.convert", "units.convert", "xkcd.get_info_0_json"}},
	} {
		code, body := do("GET", "/api/v1/tools?limit=100", tc.key, tc.hdr)
		if code != http.StatusOK {
			t.Fatalf("%s: list %d %s", name, code, body)
		}
		for _, id := range []string{"currency.convert", "units.convert", "xkcd.get_info_0_json"} {
			want := strings.Contains(strings.Join(tc.want, " "), id)
			if got := strings.Contains(body, `"`+id+`"`); got != want {
				t.Errorf("%s: lists %s = %v, want %v", name, id, got, want)
			}
		}
		if len(tc.want) == 1 && tc.want[0] == "currency.convert" {
			if code, body := do("POST", "/api/v1/tools/xkcd.get_info_0_json/execute", tc.key, tc.hdr); code != http.StatusNotFound {
				t.Errorf("%s: execute xkcd.get_info_0_json: %d %s, want 404", name, code, body)
			}
		}
	}
}
