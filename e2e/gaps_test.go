package e2e

import (
	"net/http"
	"testing"

	apianalytics "github.com/toolsmith/toolsmith/api/analytics"
	"github.com/toolsmith/toolsmith/api/tools"
	"github.com/toolsmith/toolsmith/api/verbs"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
)

// TestGapsAreRecordedAndClosed: a verb nothing fulfils (no tool fits, no
// planner is configured) becomes a Gap in
// the store, counted per run with the closest tools and the entities its
// request mentions (GET /api/v1/gaps, approvers and admins only); a tool
// registered later for the verb closes the gap and is linked to it.
func TestGapsAreRecordedAndClosed(t *testing.T) {
	e := newEnv(t)
	e.serve(verbs.New(e.client, e.store, verbs.Config{TaskQueue: e.queue, Namespace: server.Namespace()}),
		apianalytics.New(e.store, nil), tools.New(e.reg))
	body := map[string]any{"verb": "CARVE_PUMPKIN", "description": "carve a pumpkin for halloween", "context": "a party on Friday"}
	for i := 0; i < 2; i++ {
		var run verbRun
		// No tool fits and no planner is configured: the run fails, and
		// the verb is a gap.
		if code := e.post("/api/v1/verbs?wait=30s", body, &run); code != http.StatusOK || run.Result.GapRecorded != "store" {
			t.Fatalf("run %d: HTTP %d %+v", i, code, run.Result)
		}
	}
	var out struct {
		Gaps  []graph.Gap `json:"gaps"`
		Count int         `json:"count"`
	}
	if code := e.do(http.MethodGet, "/api/v1/gaps", nil, nil, &out); code != http.StatusOK {
		t.Fatalf("gaps: HTTP %d", code)
	}
	var g *graph.Gap
	for i := range out.Gaps {
		if out.Gaps[i].Verb == "CARVE_PUMPKIN" {
			g = &out.Gaps[i]
		}
	}
	if g == nil || g.Count != 2 || g.Status != graph.GapOpen || g.Description != "carve a pumpkin for halloween" || len(g.Closest) == 0 || g.FirstSeen.IsZero() {
		t.Fatalf("gap: %+v (all %+v)", g, out.Gaps)
	}
	user := e.key(identity.NewKey{Owner: "ana", Level: "user"})
	if code := e.do(http.MethodGet, "/api/v1/gaps", nil, http.Header{"Authorization": {"Bearer " + user}}, nil); code != http.StatusForbidden {
		t.Fatalf("gaps as a plain user: HTTP %d", code)
	}
	if code := e.do(http.MethodGet, "/api/v1/gaps?status=maybe", nil, nil, nil); code != http.StatusBadRequest {
		t.Fatalf("bad status: HTTP %d", code)
	}

	var reg struct {
		ClosedGap string `json:"closedGap"`
	}
	manifest := map[string]any{"toolId": "crafts.carve_pumpkin", "verb": "CARVE_PUMPKIN", "name": "Pumpkin carver",
		"description": "Plans the carving of a pumpkin: a pattern and the steps.", "category": "crafts"}
	if code := e.post("/api/v1/tools/register", map[string]any{"manifest": manifest}, &reg); code != http.StatusCreated || reg.ClosedGap != "CARVE_PUMPKIN" {
		t.Fatalf("register: HTTP %d %+v", code, reg)
	}
	out.Gaps = nil
	if code := e.do(http.MethodGet, "/api/v1/gaps?status=closed", nil, nil, &out); code != http.StatusOK || len(out.Gaps) == 0 {
		t.Fatalf("closed gaps: HTTP %d %+v", code, out)
	}
	found := false
	for _, x := range out.Gaps {
		found = found || (x.Verb == "CARVE_PUMPKIN" && x.ClosedBy == "crafts.carve_pumpkin" && !x.ClosedAt.IsZero())
	}
	if !found {
		t.Fatalf("closed gaps: %+v", out.Gaps)
	}
}
