package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
)

// TestGapsNameOnlyToolsTheCallerMayExecute: a gap's closest tools are
// answered to an approver only when the approver may execute them, as
// GET /api/v1/tools/:id answers them.
func TestGapsNameOnlyToolsTheCallerMayExecute(t *testing.T) {
	srv, keys, st := fullServer(t)
	h := srv.Handler()
	ctx := context.Background()
	emb := hashing.New(64)
	for id, perm := range map[string]string{"vet.pet_check": access.AnyOf([]string{"vet"}, nil), "pets.find": "public"} {
		vec, _ := emb.EmbedQuery(ctx, id)
		if _, err := st.UpsertTool(ctx, graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Verb: "FIND_PET", Name: id, Category: "pets",
			Status: graph.StatusActive, Permissions: []string{perm}}, Description: "Pets.", Embedding: vec, Manifest: json.RawMessage(`{"toolId":"` + id + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.RecordGap(ctx, graph.GapEvent{Verb: "CHECK_PET", At: time.Now(),
		Closest: []graph.GapCandidate{{ToolID: "vet.pet_check", Score: 0.7}, {ToolID: "pets.find", Score: 0.4}}}); err != nil {
		t.Fatal(err)
	}
	get := func(secret, path string) (int, string) {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	for _, c := range []struct {
		roles []string
		sees  bool
	}{{[]string{"approver"}, false}, {[]string{"approver", "vet"}, true}} {
		_, secret, err := keys.Create(ctx, identity.Principal{}, identity.NewKey{Owner: "vic", Level: "user", Roles: c.roles})
		if err != nil {
			t.Fatal(err)
		}
		tool, _ := get(secret, "/api/v1/tools/vet.pet_check")
		code, body := get(secret, "/api/v1/gaps")
		if code != http.StatusOK || !strings.Contains(body, `"pets.find"`) {
			t.Fatalf("roles %v: gaps %d %s", c.roles, code, body)
		}
		if got := strings.Contains(body, "vet.pet_check"); got != c.sees || (tool == http.StatusOK) != c.sees {
			t.Fatalf("roles %v: tool answers %d, gaps name it: %v\n%s", c.roles, tool, got, body)
		}
	}
}
