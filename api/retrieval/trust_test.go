package retrieval_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/demo"
	"github.com/toolsmith/toolsmith/graph"
)

// reportTally is the 202 answer of the report routes.
type reportTally struct {
	Recorded  int    `json:"recorded"`
	Learned   int    `json:"learned"`
	Unbacked  int    `json:"unbacked"`
	Unrelated int    `json:"unrelated"`
	Message   string `json:"message"`
}

// TestReportsCannotSteerOthersRanking: nothing is learned just by saying
// so. One user reports a thousand made-up successes of a look-alike tool
// (restaurant.cancel_reservation) for a query another tool fits (a table
// reservation) through both report routes, within the per-call bound;
// another user's search, and a paraphrase's, still rank
// restaurant.reserve_table first, the look-alike gains no usage evidence,
// and each answer says how many events were learned and why the rest were
// not. A flood of made-up failures of the right tool does not demote it
// either.
func TestReportsCannotSteerOthersRanking(t *testing.T) {
	ms, err := demo.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := server(t, ms...)
	const table, paraphrase = "book a table for two", "reserve a table for dinner for two people"
	other := map[string]string{"X-Tool-Groups": "*", "X-Test-User": "alice", "X-Test-Level": "user"}
	before := map[string]searchData{}
	for _, q := range []string{table, paraphrase} {
		d := search(t, srv, url.Values{"q": {q}}, other)
		if len(d.Ranked) == 0 || d.Ranked[0].Tool.ID != "restaurant.reserve_table" {
			t.Fatalf("before any report, %q ranks %v; want restaurant.reserve_table first", q, d.all())
		}
		before[q] = d
	}

	mallory := map[string]string{"X-Tool-Groups": "*", "X-Test-User": "mallory", "X-Test-Level": "user"}
	fake := map[string]any{"toolId": "restaurant.cancel_reservation", "query": table, "success": true}
	demote := map[string]any{"toolId": "restaurant.reserve_table", "query": table, "success": false}
	for i := range 10 {
		evs := make([]any, 100)
		for j := range evs {
			evs[j] = fake
			if j%4 == 3 {
				evs[j] = demote
			}
		}
		path := "/api/v1/tools/usage/batch"
		if i%2 == 1 {
			path = "/api/v1/sessions/m1/events"
		}
		got := reportOK(t, srv, path, mallory, evs)
		if got.Recorded != 100 || got.Learned != 0 || got.Unbacked+got.Unrelated != 100 ||
			!strings.Contains(got.Message, "restaurant.cancel_reservation") || !strings.Contains(got.Message, "not learned") {
			t.Fatalf("report %d answered %+v; want 100 recorded, none learned, 100 unbacked or unrelated, and why", i, got)
		}
	}
	for _, q := range []string{table, paraphrase} {
		d := search(t, srv, url.Values{"q": {q}}, other)
		if len(d.Ranked) == 0 || d.Ranked[0].Tool.ID != "restaurant.reserve_table" {
			t.Fatalf("after 1,000 made-up reports, another user's %q ranks %v; want restaurant.reserve_table first", q, d.all())
		}
		// Nothing was learned: every hit's breakdown is what it was.
		if !slices.Equal(d.all(), before[q].all()) {
			t.Fatalf("after made-up reports, %q ranks %v; before %v", q, d.all(), before[q].all())
		}
		for i, h := range d.Ranked {
			if !reflect.DeepEqual(h.Breakdown, before[q].Ranked[i].Breakdown) {
				t.Errorf("%q: %s's breakdown moved from %v to %v", q, h.Tool.ID, before[q].Ranked[i].Breakdown, h.Breakdown)
			}
		}
	}
}

// TestReportsBackedByRunsAreLearned: a user who ran a tool through
// Toolsmith N times can report N uses of it, and they are learned; the
// next report of that tool, and a reported success backed only by a
// failed run, are not. An admin's import is trusted as given.
func TestReportsBackedByRunsAreLearned(t *testing.T) {
	ms, err := demo.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	srv, svc := server(t, ms...)
	const tool, q = "restaurant.cancel_reservation", "cancel my restaurant table reservation for friday"
	bob := map[string]string{"X-Tool-Groups": "*", "X-Test-User": "bob", "X-Test-Level": "user"}
	learnt := func() float64 {
		t.Helper()
		d := search(t, srv, url.Values{"q": {q}, "maxTools": {"20"}}, bob)
		for _, h := range d.Ranked {
			if h.Tool.ID == tool {
				return h.Breakdown["queryLog"]["raw"] + h.Breakdown["neighbours"]["raw"]
			}
		}
		t.Fatalf("%q does not rank %s: %v", q, tool, d.all())
		return 0
	}
	if e := learnt(); e != 0 {
		t.Fatalf("before any use, %s has usage evidence %v for %q", tool, e, q)
	}
	// Three runs Toolsmith made for bob (as its execute activity records
	// them), a failed one, and one of another user's.
	runs := []graph.UsageEvent{
		{ToolID: tool, UserID: "bob", Success: true}, {ToolID: tool, UserID: "bob", Success: true}, {ToolID: tool, UserID: "bob", Success: true},
		{ToolID: tool, UserID: "bob", Success: false}, {ToolID: tool, UserID: "carol", Success: true},
	}
	if err := svc.RecordUsage(context.Background(), runs); err != nil {
		t.Fatal(err)
	}
	ev := map[string]any{"toolId": tool, "query": q, "success": true}
	// A query nothing like the tool is not learned, backed or not, and
	// spends no run.
	got := reportOK(t, srv, "/api/v1/tools/usage/batch", bob, []any{map[string]any{"toolId": tool, "query": "convert 100 dollars into euros", "success": true}})
	if got.Learned != 0 || got.Unrelated != 1 || !strings.Contains(got.Message, "not about the tool") {
		t.Fatalf("a backed report whose query is nothing like the tool answered %+v; want it unrelated", got)
	}
	got = reportOK(t, srv, "/api/v1/tools/usage/batch", bob, []any{ev, ev, ev, ev})
	if got.Recorded != 4 || got.Learned != 3 || got.Unbacked != 1 || got.Message == "" {
		t.Fatalf("4 reports after 3 successful runs answered %+v; want 3 learned, 1 unbacked", got)
	}
	if e := learnt(); e <= 0 {
		t.Fatalf("after 3 backed reports, %s has no usage evidence for %q", tool, q)
	}
	got = reportOK(t, srv, "/api/v1/sessions/b1/events", bob, []any{ev})
	if got.Learned != 0 || got.Unbacked != 1 {
		t.Fatalf("a 4th reported success after 3 successful runs (and a failed one) answered %+v; want it unbacked", got)
	}
	got = reportOK(t, srv, "/api/v1/sessions/b1/events", bob, []any{map[string]any{"toolId": tool, "success": false}})
	if got.Learned != 1 || got.Unbacked != 0 || got.Message != "" {
		t.Fatalf("a reported failure after a failed run answered %+v; want it learned", got)
	}
	admin := map[string]string{"X-Tool-Groups": "*", "X-Test-User": "ops", "X-Test-Level": "admin"}
	got = reportOK(t, srv, "/api/v1/tools/usage/batch", admin, []any{ev, ev})
	if got.Recorded != 2 || got.Learned != 2 || got.Unbacked != 0 {
		t.Fatalf("an admin's import answered %+v; want it learned as given", got)
	}
	// Spoofing another user's id is still refused, on both routes.
	for _, path := range []string{"/api/v1/tools/usage/batch", "/api/v1/sessions/b1/events"} {
		code, env := do(t, srv, http.MethodPost, path, map[string]string{"X-Test-User": "mallory", "X-Test-Level": "user"},
			map[string]any{"events": []any{map[string]any{"toolId": tool, "query": q, "success": true, "userId": "bob"}}})
		if code != http.StatusForbidden || !strings.Contains(env.Error.Message, "events[0].userId") {
			t.Fatalf("%s with another user's id: %d %+v", path, code, env.Error)
		}
	}
}

func reportOK(t *testing.T, srv *httptest.Server, path string, headers map[string]string, events []any) reportTally {
	t.Helper()
	code, env := do(t, srv, http.MethodPost, path, headers, map[string]any{"events": events})
	if code != http.StatusAccepted {
		t.Fatalf("%s: %d %+v", path, code, env.Error)
	}
	var got reportTally
	if err := json.Unmarshal(env.Data, &got); err != nil {
		t.Fatal(err)
	}
	return got
}
