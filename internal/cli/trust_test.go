package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsmith/toolsmith/mcp"
	"github.com/toolsmith/toolsmith/retrieval"
)

// TestMadeUpReportsDev: in the shape of `make run` (the dev wiring, the
// demo catalogue, USE-Lite), one ordinary user key reports 1,000 made-up
// successes of restaurant.cancel_reservation for "book a table for two",
// in ten calls within the rate limits. Nothing is learned: another user,
// the owner and MCP find_tools still rank restaurant.reserve_table first,
// with the look-alike's usage signals at zero. The same user's real
// execution of a tool backs exactly one report of it.
func TestMadeUpReportsDev(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the dev system with USE-Lite")
	}
	dir := useLiteDir(t)
	dataDir := t.TempDir()
	in := startDev(t, dataDir, "--embedder", "use-lite", "--model-dir", dir)
	const table = "book a table for two"
	in.waitCatalogueSettled(t)
	key := func(owner string) string {
		t.Helper()
		code, out, errOut := runCLI(t, "keys", "create", "--data-dir", dataDir, "--url", in.base, "--owner", owner, "--level", "user", "--json")
		if code != exitOK {
			t.Fatalf("keys create %s: %d\n%s%s", owner, code, out, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return "Bearer " + lines[len(lines)-1]
	}
	mallory, alice := key("mallory"), key("alice")
	first := func(who, auth string) {
		t.Helper()
		hits, _ := in.search(t, table, auth)
		if len(hits) == 0 || hits[0].Tool.ID != "restaurant.reserve_table" {
			t.Fatalf("%s: %q ranks %v; want restaurant.reserve_table first", who, table, hitIDs(hits))
		}
		for i, h := range hits[:min(2, len(hits))] {
			t.Logf("%s: %q #%d %s (%.2f)", who, table, i+1, h.Tool.ID, h.Score)
		}
		for _, h := range hits {
			if h.Tool.ID == "restaurant.cancel_reservation" && h.Breakdown.Neighbours.Weighted+h.Breakdown.Usage.Weighted+h.Breakdown.QueryLog.Weighted+h.Breakdown.Popularity.Weighted > 0 {
				t.Errorf("%s: restaurant.cancel_reservation has usage evidence for %q: %+v", who, table, h.Breakdown)
			}
		}
	}
	first("alice, before", alice)

	fake := map[string]any{"toolId": "restaurant.cancel_reservation", "query": table, "success": true}
	evs := make([]any, retrieval.MaxCallerEvents)
	for i := range evs {
		evs[i] = fake
	}
	for i := range 10 {
		var tally retrieval.Tally
		code, env := in.call(t, http.MethodPost, "/api/v1/tools/usage/batch", map[string]any{"events": evs}, "Authorization", mallory)
		if code != http.StatusAccepted || json.Unmarshal(env.Data, &tally) != nil {
			t.Fatalf("report %d: %d %s", i, code, env.Data)
		}
		if tally.Learned != 0 || tally.Unbacked+tally.Unrelated != len(evs) || tally.Message == "" {
			t.Fatalf("report %d answered %+v; want nothing learned, and why", i, tally)
		}
	}
	first("alice, after", alice)
	first("the owner, after", in.auth)
	cs, err := mcp.Connect(context.Background(), in.base, strings.TrimPrefix(alice, "Bearer "), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "find_tools", Arguments: map[string]any{"intent": table, "limit": 3}})
	if err != nil || res.IsError {
		t.Fatalf("find_tools: %v %+v", err, res)
	}
	doc, _ := json.Marshal(res.StructuredContent)
	var found mcp.FindToolsOut
	if err := json.Unmarshal(doc, &found); err != nil || len(found.Tools) == 0 || found.Tools[0].ToolID != "restaurant.reserve_table" {
		t.Fatalf("find_tools %q after made-up reports: %s (%v); want restaurant.reserve_table first", table, doc, err)
	}

	// A real run backs one report: mallory converts currency once, then
	// reports two uses of it.
	code, env := in.call(t, http.MethodPost, "/api/v1/tools/currency.convert/execute?wait=60s",
		map[string]any{"inputs": map[string]any{"amount": 100, "from": "USD", "to": "EUR"}}, "Authorization", mallory)
	if code != http.StatusOK {
		t.Fatalf("execute currency.convert: %d %s", code, env.Data)
	}
	conv := map[string]any{"toolId": "currency.convert", "query": "turn 100 dollars into euros", "success": true}
	var tally retrieval.Tally
	code, env = in.call(t, http.MethodPost, "/api/v1/tools/usage/batch", map[string]any{"events": []any{conv, conv}}, "Authorization", mallory)
	if code != http.StatusAccepted || json.Unmarshal(env.Data, &tally) != nil || tally.Learned != 1 || tally.Unbacked != 1 {
		t.Fatalf("two reports after one run: %d %s; want one learned, one unbacked", code, env.Data)
	}

	// Real runs of a harmless tool do not carry an unrelated query: mallory
	// converts currency ten more times, then reports ten uses of it for
	// the table query. Nothing is learned, no run is spent, and alice's
	// search is as it was.
	for i := range 10 {
		code, env := in.call(t, http.MethodPost, "/api/v1/tools/currency.convert/execute?wait=60s",
			map[string]any{"inputs": map[string]any{"amount": 10 + i, "from": "USD", "to": "EUR"}}, "Authorization", mallory)
		if code != http.StatusOK {
			t.Fatalf("execute currency.convert: %d %s", code, env.Data)
		}
	}
	far := map[string]any{"toolId": "currency.convert", "query": table, "success": true}
	tally = retrieval.Tally{}
	code, env = in.call(t, http.MethodPost, "/api/v1/tools/usage/batch", map[string]any{"events": []any{far, far, far, far, far, far, far, far, far, far}}, "Authorization", mallory)
	if code != http.StatusAccepted || json.Unmarshal(env.Data, &tally) != nil || tally.Learned != 0 || tally.Unrelated != 10 {
		t.Fatalf("ten backed reports of currency.convert for %q: %d %s; want none learned, ten unrelated", table, code, env.Data)
	}
	first("alice, after backed reports of an unrelated query", alice)
	hits, _ := in.search(t, table, alice)
	for _, h := range hits {
		if h.Tool.ID == "currency.convert" && h.Breakdown.Neighbours.Weighted+h.Breakdown.QueryLog.Weighted > 0 {
			t.Errorf("currency.convert has usage evidence for %q: %+v", table, h.Breakdown)
		}
	}
	// The runs were not spent: a related report is still learned.
	code, env = in.call(t, http.MethodPost, "/api/v1/tools/usage/batch", map[string]any{"events": []any{conv}}, "Authorization", mallory)
	if code != http.StatusAccepted || json.Unmarshal(env.Data, &tally) != nil || tally.Learned != 1 {
		t.Fatalf("a related report after the unrelated ones: %d %s; want it learned", code, env.Data)
	}
}
