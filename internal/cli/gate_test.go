package cli

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/toolsmith/toolsmith/demo"
	"github.com/toolsmith/toolsmith/retrieval"
)

// TestDenseHistoryStaysOnTopicDev: in the shape of `make run` (the dev
// wiring, the demo catalogue of about a hundred tools, USE-Lite, the
// first-start owner key), an admin imports every demo tool's own use cases
// and example scenarios as successful uses. Every tool then has history, so
// the gate on usage evidence opens; still, no tool may enter the first five
// of an unrelated query by its history alone: a tool that was not among the
// zero-shot first five, and whose own similarity to the query is below
// retrieval.ReportFloor (nothing like it), stays out. The queries each have
// a fitting tool the owner may execute (evaluation/TUNING.md, twenty-fourth
// round, says what happens to queries nothing fits).
func TestDenseHistoryStaysOnTopicDev(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the dev system with USE-Lite")
	}
	dir := useLiteDir(t)
	in := startDev(t, t.TempDir(), "--embedder", "use-lite", "--model-dir", dir)
	in.waitCatalogueSettled(t)
	queries := []string{
		"translate hello to Spanish",
		"book a table for two",
		"what will the weather be in Paris tomorrow",
		"how many kilometres is ten miles",
		"book a flight from Berlin to Rome",
		"what time is it in Sydney right now",
		"rent a car at the Lisbon airport for the weekend",
		"cancel my hotel reservation",
	}
	before := map[string][]string{}
	for _, q := range queries {
		hits, _ := in.search(t, q, in.auth)
		before[q] = hitIDs(hits[:min(5, len(hits))])
	}

	manifests, err := demo.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	// The tools the owner may execute (the demo's agent-state tools are
	// not), each with its use cases and its examples' scenarios.
	code, env := in.call(t, http.MethodGet, "/api/v1/tools?limit=1000", nil, "Authorization", in.auth)
	var page struct {
		Items []struct {
			ID string `json:"toolId"`
		} `json:"items"`
	}
	if code != http.StatusOK || json.Unmarshal(env.Data, &page) != nil {
		t.Fatalf("list: %d %s", code, env.Data)
	}
	listed := map[string]bool{}
	for _, it := range page.Items {
		listed[it.ID] = true
	}
	var events []map[string]any
	for _, m := range manifests {
		if !listed[m.ToolID] {
			continue
		}
		texts := slices.Clone(m.UseCases)
		for _, ex := range m.Examples {
			if ex.Scenario != "" {
				texts = append(texts, ex.Scenario)
			}
		}
		for _, q := range texts {
			events = append(events, map[string]any{"toolId": m.ToolID, "query": q, "success": true})
		}
	}
	var tally retrieval.Tally
	code, env = in.call(t, http.MethodPost, "/api/v1/tools/usage/batch", map[string]any{"events": events}, "Authorization", in.auth)
	if code != http.StatusAccepted || json.Unmarshal(env.Data, &tally) != nil || tally.Learned == 0 {
		t.Fatalf("import of %d use cases: %d %s %+v", len(events), code, env.Data, env.Error)
	}
	t.Logf("imported %d use cases of %d tools: %+v", len(events), len(manifests), tally)

	for _, q := range queries {
		hits, cached := in.search(t, q, in.auth)
		if cached {
			t.Fatalf("%q came from the cache after the import", q)
		}
		top := hits[:min(5, len(hits))]
		t.Logf("%q: before %v, after %v (best similarity %.2f)", q, before[q], hitIDs(top), bestSemantic(hits))
		for _, h := range top {
			b := h.Breakdown
			if slices.Contains(before[q], h.Tool.ID) {
				continue
			}
			if b.Semantic.Raw >= retrieval.ReportFloor {
				t.Logf("%q: %s entered the first five with similarity %.2f: usage %.2f, neighbours %.2f, query log %.2f, popularity %.2f, success %.2f",
					q, h.Tool.ID, b.Semantic.Raw, b.Usage.Weighted, b.Neighbours.Weighted, b.QueryLog.Weighted, b.Popularity.Weighted, b.Success.Weighted)
				continue
			}
			t.Errorf("%q: %s entered the first five (%v, zero-shot %v) on history alone: similarity %.2f, centroid %.2f (usage %.2f), neighbours %.2f, query log %.2f, popularity %.2f",
				q, h.Tool.ID, hitIDs(top), before[q], b.Semantic.Raw, b.Usage.Raw, b.Usage.Weighted, b.Neighbours.Weighted, b.QueryLog.Weighted, b.Popularity.Weighted)
		}
	}
}

// bestSemantic is the best raw cosine among hits.
func bestSemantic(hits []retrieval.Hit) float64 {
	best := 0.0
	for _, h := range hits {
		best = max(best, h.Breakdown.Semantic.Raw)
	}
	return best
}
