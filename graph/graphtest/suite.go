package graphtest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// Run runs the contract suite. open must return a fresh, empty store on each
// call (and arrange its cleanup with t.Cleanup); the suite records its own
// embedder (Model, Dim) and uses hand-made vectors.
func Run(t *testing.T, open func(t *testing.T) graph.Store) {
	probe := open(t)
	t.Logf("graphtest: running the graph.Store contract suite against %T", probe)

	tests := []struct {
		name string
		fn   func(*testing.T, func(*testing.T) graph.Store)
	}{
		{"Embedder", testEmbedder},
		{"UpsertAndGet", testUpsertAndGet},
		{"UpsertInvalid", testUpsertInvalid},
		{"AtomicUpsert", testAtomicUpsert},
		{"ReplaceEdgesAndText", testReplace},
		{"StatusAndHistory", testStatusAndHistory},
		{"ListTools", testListTools},
		{"ManifestRunes", testManifestRunes},
		{"Filter", testFilter},
		{"FilterModuleNamespace", testFilterModuleNamespace},
		{"Related", testRelated},
		{"VectorSearch", testVectorSearch},
		{"MeanVector", testMeanVector},
		{"VectorScores", testVectorScores},
		{"TextSearch", testTextSearch},
		{"TextSearchHostileInput", testTextSearchHostile},
		{"Entities", testEntities},
		{"ToolsNearEntities", testToolsNearEntities},
		{"Neighbourhood", testNeighbourhood},
		{"Usage", testUsage},
		{"ServedQueriesAfter", testServedQueriesAfter},
		{"RunClaims", testRunClaims},
		{"Stats", testStats},
		{"Concurrency", testConcurrency},
		{"Definitions", testDefinitions},
		{"Keys", testKeys},
		{"Audit", testAudit},
		{"Gaps", testGaps},
		{"Pairings", testPairings},
		{"Snapshots", testSnapshots},
		{"ModelVersions", testModelVersions},
		{"Series", testSeries},
		{"Sessions", testSessions},
		{"RateCounts", testRateCounts},
		{"CallLedger", testCallLedger},
		{"WrapperApprovals", testWrapperApprovals},
		{"Notices", testNotices},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
}

var ctx = context.Background()

func testEmbedder(t *testing.T, open func(*testing.T) graph.Store) {
	s := open(t)
	if _, err := s.Embedder(ctx); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("Embedder on a fresh store: err = %v, want ErrNotFound", err)
	}
	info := graph.EmbedderInfo{Model: "m1", Dimension: Dim}
	if err := s.EnsureEmbedder(ctx, info); err != nil {
		t.Fatalf("EnsureEmbedder: %v", err)
	}
	if err := s.EnsureEmbedder(ctx, info); err != nil {
		t.Fatalf("EnsureEmbedder again with the same info: %v", err)
	}
	got, err := s.Embedder(ctx)
	if err != nil || got != info {
		t.Fatalf("Embedder = %+v, %v; want %+v", got, err, info)
	}
	for _, other := range []graph.EmbedderInfo{{Model: "m2", Dimension: Dim}, {Model: "m1", Dimension: Dim * 2}} {
		if err := s.EnsureEmbedder(ctx, other); !errors.Is(err, graph.ErrEmbedderMismatch) {
			t.Errorf("EnsureEmbedder(%+v) after %+v: err = %v, want ErrEmbedderMismatch", other, info, err)
		}
	}
	if got, _ := s.Embedder(ctx); got != info {
		t.Errorf("a refused EnsureEmbedder changed the record to %+v", got)
	}
}

func richTool() graph.Tool {
	return mk("airline.book", "MAKE_RESERVATION", "Airline Booking", "travel",
		"Book a seat on a scheduled flight with a partner airline.", unit(0),
		tags("flights", "booking"), groups("default", "travel"), module("airline"),
		useCases("reserve a flight to Denver"),
		entities(graph.EntityRef{Name: "Southwest", Type: "Airline", Aliases: []string{"SWA"}}),
		relations(
			graph.Relation{Kind: graph.RelDependsOn, Target: "payments.charge"},
			graph.Relation{Kind: graph.RelPairsWith, Target: "hotel.book", Score: 0.7, Sequence: "after"},
		),
		func(t *graph.Tool) {
			t.State = "booked"
			t.AvailableInStates = []string{"searching"}
			t.RequiredLevel = "user"
			t.Complexity = "medium"
			t.Version = "1.2.0"
			t.RequiredParams = []string{"flight", "passenger"}
			t.OptionalParams = []string{"seat"}
			t.Permissions = []string{"authenticated"}
		})
}

func testUpsertAndGet(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	in := richTool()
	res, err := s.UpsertTool(ctx, in)
	if err != nil {
		t.Fatalf("UpsertTool: %v", err)
	}
	if !res.Created || res.Revision != 1 {
		t.Fatalf("first upsert = %+v, want created revision 1", res)
	}
	got, err := s.GetTool(ctx, in.ID)
	if err != nil {
		t.Fatalf("GetTool: %v", err)
	}
	checkSameTool(t, got, in)
	if got.Status != graph.StatusActive {
		t.Errorf("status defaulted to %q, want active", got.Status)
	}
	if got.CreatedAt.IsZero() || got.UpdatedAt.IsZero() {
		t.Errorf("CreatedAt/UpdatedAt not set: %v / %v", got.CreatedAt, got.UpdatedAt)
	}

	in2 := in
	in2.Name = "Airline Booking v2"
	res, err = s.UpsertTool(ctx, in2)
	if err != nil {
		t.Fatalf("second UpsertTool: %v", err)
	}
	if res.Created || res.Revision != 2 {
		t.Fatalf("second upsert = %+v, want replaced revision 2", res)
	}
	got2, err := s.GetTool(ctx, in.ID)
	if err != nil {
		t.Fatalf("GetTool: %v", err)
	}
	if got2.Name != "Airline Booking v2" {
		t.Errorf("name after replace = %q", got2.Name)
	}
	if !got2.CreatedAt.Equal(got.CreatedAt) {
		t.Errorf("CreatedAt changed on replace: %v -> %v", got.CreatedAt, got2.CreatedAt)
	}

	if _, err := s.GetTool(ctx, "no.such.tool"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("GetTool(unknown): err = %v, want ErrNotFound", err)
	}
}

// checkSameTool compares what a store must round-trip.
func checkSameTool(t *testing.T, got, want graph.Tool) {
	t.Helper()
	type pair struct {
		name      string
		got, want any
	}
	for _, p := range []pair{
		{"ID", got.ID, want.ID}, {"Verb", got.Verb, want.Verb}, {"Name", got.Name, want.Name},
		{"ShortDescription", got.ShortDescription, want.ShortDescription}, {"Category", got.Category, want.Category},
		{"Tags", got.Tags, want.Tags}, {"Groups", got.Groups, want.Groups}, {"State", got.State, want.State},
		{"AvailableInStates", got.AvailableInStates, want.AvailableInStates}, {"Permissions", got.Permissions, want.Permissions},
		{"RequiredLevel", got.RequiredLevel, want.RequiredLevel}, {"Module", got.Module, want.Module},
		{"Complexity", got.Complexity, want.Complexity}, {"Version", got.Version, want.Version},
		{"RequiredParams", got.RequiredParams, want.RequiredParams}, {"OptionalParams", got.OptionalParams, want.OptionalParams},
		{"Description", got.Description, want.Description}, {"UseCases", got.UseCases, want.UseCases},
		{"Entities", got.Entities, want.Entities}, {"Relations", got.Relations, want.Relations},
	} {
		if !reflect.DeepEqual(p.got, p.want) {
			t.Errorf("%s = %#v, want %#v", p.name, p.got, p.want)
		}
	}
	if len(got.Embedding) != len(want.Embedding) {
		t.Errorf("embedding length = %d, want %d", len(got.Embedding), len(want.Embedding))
	} else {
		for i := range got.Embedding {
			if !approx(float64(got.Embedding[i]), float64(want.Embedding[i]), 1e-6) {
				t.Errorf("embedding[%d] = %v, want %v", i, got.Embedding[i], want.Embedding[i])
				break
			}
		}
	}
	if !jsonEqual(got.Manifest, want.Manifest) {
		t.Errorf("manifest = %s, want %s", got.Manifest, want.Manifest)
	}
}

func testUpsertInvalid(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	cases := []struct {
		name string
		tool graph.Tool
		want error
	}{
		{"empty id", mk("", "V", "n", "c", "d", unit(0)), fault.ErrInvalid},
		{"bad status", mk("x", "V", "n", "c", "d", unit(0), status("retired")), fault.ErrInvalid},
		{"bad relation kind", mk("x", "V", "n", "c", "d", unit(0), relations(graph.Relation{Kind: "LIKES", Target: "y"})), fault.ErrInvalid},
		{"short embedding", mk("x", "V", "n", "c", "d", make([]float32, Dim-1)), graph.ErrDimension},
		{"long embedding", mk("x", "V", "n", "c", "d", make([]float32, Dim+1)), graph.ErrDimension},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.UpsertTool(ctx, tc.tool); !errors.Is(err, tc.want) {
				t.Fatalf("UpsertTool: err = %v, want %v", err, tc.want)
			}
			if tc.tool.ID != "" {
				if _, err := s.GetTool(ctx, tc.tool.ID); !errors.Is(err, fault.ErrNotFound) {
					t.Fatalf("refused tool is readable: err = %v", err)
				}
			}
		})
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	if st.Tools != 0 {
		t.Errorf("refused upserts left %d tools", st.Tools)
	}
}

func testAtomicUpsert(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	put(t, s, mk("hotel.book", "BOOK_HOTEL", "Hotel Booking", "travel", "Book a hotel room.", unit(5)))
	v1 := mk("zoo.tickets", "BUY_TICKETS", "Zebra Zoo Tickets", "leisure", "Buy zoo entry tickets to see the zebra.", unit(1),
		tags("zebra"), entities(graph.EntityRef{Name: "City Zoo", Type: "Zoo"}),
		relations(graph.Relation{Kind: graph.RelPairsWith, Target: "hotel.book", Score: 0.5}))
	put(t, s, v1)

	bad := mk("zoo.tickets", "SELL_GIRAFFES", "Giraffe Market", "market", "Sell giraffes.", make([]float32, Dim+3),
		tags("giraffe"), entities(graph.EntityRef{Name: "Giraffe Corp", Type: "Company"}))
	if _, err := s.UpsertTool(ctx, bad); !errors.Is(err, graph.ErrDimension) {
		t.Fatalf("upsert with wrong dimension: err = %v, want ErrDimension", err)
	}

	got, err := s.GetTool(ctx, v1.ID)
	if err != nil {
		t.Fatalf("GetTool: %v", err)
	}
	checkSameTool(t, got, v1)
	if h, err := s.History(ctx, v1.ID); err != nil || len(h) != 1 {
		t.Errorf("History after failed upsert = %d revisions, %v; want 1", len(h), err)
	}
	hits, err := s.TextSearch(ctx, "zebra", 5, graph.Filter{})
	if err != nil || !sameStrings(ids(hits), []string{v1.ID}) {
		t.Errorf("TextSearch(zebra) = %v, %v; want the previous version's full-text row", ids(hits), err)
	}
	if hits, _ := s.TextSearch(ctx, "giraffe", 5, graph.Filter{}); len(hits) != 0 {
		t.Errorf("TextSearch(giraffe) = %v; the failed version leaked into full-text", ids(hits))
	}
	vh, err := s.VectorSearch(ctx, unit(1), 1, graph.Filter{})
	if err != nil || len(vh) != 1 || vh[0].Tool.ID != v1.ID || !approx(vh[0].Score, 1, 1e-4) {
		t.Errorf("VectorSearch(e1) = %+v, %v; want the previous vector", vh, err)
	}
	rel, err := s.Related(ctx, v1.ID, graph.RelPairsWith, 10, graph.Filter{})
	if err != nil || !sameStrings(ids(rel), []string{"hotel.book"}) {
		t.Errorf("Related = %v, %v; want the previous edges", ids(rel), err)
	}
	if ents, _ := s.FindEntities(ctx, []string{"Giraffe Corp"}); len(ents) != 0 {
		t.Errorf("entity of the failed version exists: %+v", ents)
	}
	near, err := s.ToolsNearEntities(ctx, []string{"city zoo"}, 1, graph.Filter{})
	if err != nil || len(near) != 1 || near[0].ToolID != v1.ID {
		t.Errorf("ToolsNearEntities(city zoo) = %+v, %v; want the previous ABOUT edge", near, err)
	}
}

func testReplace(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	put(t, s,
		mk("a", "DO_A", "Alpha", "c", "first", unit(2)),
		mk("b", "DO_B", "Beta", "c", "second", unit(3)),
		mk("x", "DO_X", "Quokka Finder", "animals", "Finds quokkas.", unit(0),
			tags("quokka"), entities(graph.EntityRef{Name: "Quokka", Type: "Animal"}),
			relations(graph.Relation{Kind: graph.RelDependsOn, Target: "a"})))
	put(t, s, mk("x", "DO_X", "Wombat Finder", "animals", "Finds wombats.", unit(4),
		tags("wombat"), relations(graph.Relation{Kind: graph.RelDependsOn, Target: "b"})))

	rel, err := s.Related(ctx, "x", graph.RelDependsOn, 10, graph.Filter{})
	if err != nil || !sameStrings(ids(rel), []string{"b"}) {
		t.Errorf("DEPENDS_ON after replace = %v, %v; want [b] (old edges replaced)", ids(rel), err)
	}
	if hits, _ := s.TextSearch(ctx, "quokka", 5, graph.Filter{}); len(hits) != 0 {
		t.Errorf("old text still indexed: %v", ids(hits))
	}
	if hits, _ := s.TextSearch(ctx, "wombat", 5, graph.Filter{}); !sameStrings(ids(hits), []string{"x"}) {
		t.Errorf("new text not indexed: %v", ids(hits))
	}
	if near, _ := s.ToolsNearEntities(ctx, []string{"quokka"}, 1, graph.Filter{}); len(near) != 0 {
		t.Errorf("old ABOUT edge kept: %+v", near)
	}
	vh, _ := s.VectorSearch(ctx, unit(4), 1, graph.Filter{})
	if len(vh) != 1 || vh[0].Tool.ID != "x" {
		t.Errorf("new vector not searched: %+v", vh)
	}
	vh, _ = s.VectorSearch(ctx, unit(0), 4, graph.Filter{})
	for _, h := range vh {
		if h.Tool.ID == "x" && h.Score > 0.01 {
			t.Errorf("old vector still scored: %+v", h)
		}
	}
}

func testStatusAndHistory(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	v1 := mk("fx.convert", "CONVERT_CURRENCY", "Currency Converter", "finance", "Convert money.", unit(0))
	put(t, s, v1)
	v2 := v1
	v2.Description = "Convert money between currencies."
	v2.Manifest = []byte(`{"toolId":"fx.convert","rev":2}`)
	put(t, s, v2)

	if err := s.SetStatus(ctx, "fx.convert", graph.StatusDeprecated, "superseded by fx.v2"); err != nil {
		t.Fatalf("SetStatus: %v", err)
	}
	got, err := s.GetTool(ctx, "fx.convert")
	if err != nil {
		t.Fatalf("GetTool of a deprecated tool: %v", err)
	}
	if got.Status != graph.StatusDeprecated || got.Description != v2.Description {
		t.Errorf("after deprecate: status %q description %q", got.Status, got.Description)
	}
	h, err := s.History(ctx, "fx.convert")
	if err != nil {
		t.Fatalf("History: %v", err)
	}
	if len(h) != 3 {
		t.Fatalf("History has %d revisions, want 3: %+v", len(h), h)
	}
	for i, r := range h {
		if r.Revision != i+1 {
			t.Errorf("revision[%d] = %d, want %d (oldest first)", i, r.Revision, i+1)
		}
	}
	if !jsonEqual(h[0].Manifest, v1.Manifest) || !jsonEqual(h[1].Manifest, v2.Manifest) {
		t.Errorf("history manifests = %s, %s", h[0].Manifest, h[1].Manifest)
	}
	if h[2].Status != graph.StatusDeprecated || h[2].Reason != "superseded by fx.v2" || h[0].Status != graph.StatusActive {
		t.Errorf("history statuses/reason = %+v", h)
	}
	if h[2].At.Before(h[0].At) {
		t.Errorf("history times go backwards: %v then %v", h[0].At, h[2].At)
	}

	// Deprecated tools leave default queries but stay reachable on request.
	if hits, _ := s.VectorSearch(ctx, unit(0), 5, graph.Filter{}); len(hits) != 0 {
		t.Errorf("deprecated tool in default VectorSearch: %v", ids(hits))
	}
	if hits, _ := s.TextSearch(ctx, "currency", 5, graph.Filter{}); len(hits) != 0 {
		t.Errorf("deprecated tool in default TextSearch: %v", ids(hits))
	}
	hits, err := s.VectorSearch(ctx, unit(0), 5, graph.Filter{Statuses: []string{graph.StatusDeprecated}})
	if err != nil || !sameStrings(ids(hits), []string{"fx.convert"}) || hits[0].Tool.Status != graph.StatusDeprecated {
		t.Errorf("VectorSearch(deprecated) = %+v, %v", hits, err)
	}

	// Re-enable.
	if err := s.SetStatus(ctx, "fx.convert", graph.StatusActive, "restored"); err != nil {
		t.Fatalf("SetStatus(active): %v", err)
	}
	if hits, _ := s.TextSearch(ctx, "currency", 5, graph.Filter{}); !sameStrings(ids(hits), []string{"fx.convert"}) {
		t.Errorf("re-enabled tool not in TextSearch: %v", ids(hits))
	}
	if h, _ := s.History(ctx, "fx.convert"); len(h) != 4 {
		t.Errorf("History after re-enable has %d revisions, want 4", len(h))
	}

	if err := s.SetStatus(ctx, "nope", graph.StatusDisabled, ""); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("SetStatus(unknown): err = %v, want ErrNotFound", err)
	}
	if err := s.SetStatus(ctx, "fx.convert", "sleeping", ""); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("SetStatus(bad status): err = %v, want ErrInvalid", err)
	}
	if _, err := s.History(ctx, "nope"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("History(unknown): err = %v, want ErrNotFound", err)
	}
}

func testListTools(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	var want []string
	for i := 0; i < 25; i++ {
		id := fmt.Sprintf("tool.%02d", i)
		cat := []string{"alpha", "beta", "gamma"}[i%3]
		put(t, s, mk(id, "DO", "Tool", cat, "d", unit(i)))
		want = append(want, id)
	}
	put(t, s, mk("zz.disabled", "DO", "Tool", "alpha", "d", unit(0), status(graph.StatusDisabled)))

	var got []string
	after := ""
	pages := 0
	for {
		p, err := s.ListTools(ctx, graph.ListQuery{After: after, Limit: 10})
		if err != nil {
			t.Fatalf("ListTools: %v", err)
		}
		pages++
		if p.Total != 25 {
			t.Errorf("page %d Total = %d, want 25 (active only)", pages, p.Total)
		}
		got = append(got, summaryIDs(p.Items)...)
		if p.Next == "" {
			break
		}
		if p.Next != p.Items[len(p.Items)-1].ID {
			t.Errorf("Next = %q, want last id %q", p.Next, p.Items[len(p.Items)-1].ID)
		}
		after = p.Next
		if pages > 5 {
			t.Fatal("paging does not terminate")
		}
	}
	if pages != 3 || !sameStrings(got, want) {
		t.Errorf("paged %d pages: %v; want 3 pages of %v", pages, got, want)
	}

	p, err := s.ListTools(ctx, graph.ListQuery{Limit: 100, Filter: graph.Filter{Categories: []string{"beta"}}})
	if err != nil {
		t.Fatalf("ListTools(beta): %v", err)
	}
	if p.Total != 8 || len(p.Items) != 8 || p.Next != "" {
		t.Errorf("beta page: total %d items %d next %q; want 8, 8, \"\"", p.Total, len(p.Items), p.Next)
	}
	for _, it := range p.Items {
		if it.Category != "beta" {
			t.Errorf("category filter leaked %q", it.Category)
		}
	}

	// Allow: only even ids. Pages still fill, Total ignores Allow.
	even := func(ts *graph.ToolSummary) bool { var n int; fmt.Sscanf(ts.ID, "tool.%d", &n); return n%2 == 0 }
	p, err = s.ListTools(ctx, graph.ListQuery{Limit: 5, Filter: graph.Filter{Allow: even}})
	if err != nil {
		t.Fatalf("ListTools(allow): %v", err)
	}
	if !sameStrings(summaryIDs(p.Items), []string{"tool.00", "tool.02", "tool.04", "tool.06", "tool.08"}) || p.Total != 25 || p.Next == "" {
		t.Errorf("allowed page = %v total %d next %q", summaryIDs(p.Items), p.Total, p.Next)
	}

	// Listing named ids (as retrieval does for a session's tools): sorted,
	// duplicates and unknown ids ignored, paged, Allow applied to items.
	named := []string{"tool.07", "tool.02", "tool.09", "tool.02", "nope"}
	p, err = s.ListTools(ctx, graph.ListQuery{Limit: 2, Filter: graph.Filter{IDs: named}})
	if err != nil || !sameStrings(summaryIDs(p.Items), []string{"tool.02", "tool.07"}) || p.Next != "tool.07" || p.Total != 3 {
		t.Errorf("ListTools(ids) = %v next %q total %d, %v; want [tool.02 tool.07] next tool.07 total 3", summaryIDs(p.Items), p.Next, p.Total, err)
	}
	p, err = s.ListTools(ctx, graph.ListQuery{After: "tool.07", Limit: 2, Filter: graph.Filter{IDs: named}})
	if err != nil || !sameStrings(summaryIDs(p.Items), []string{"tool.09"}) || p.Next != "" || p.Total != 3 {
		t.Errorf("ListTools(ids, page 2) = %v next %q total %d, %v; want [tool.09] total 3", summaryIDs(p.Items), p.Next, p.Total, err)
	}
	p, err = s.ListTools(ctx, graph.ListQuery{Limit: 1, Filter: graph.Filter{IDs: named, Allow: even}})
	if err != nil || !sameStrings(summaryIDs(p.Items), []string{"tool.02"}) || p.Next != "" || p.Total != 3 {
		t.Errorf("ListTools(ids, allow) = %v next %q total %d, %v; want [tool.02], no next, total 3", summaryIDs(p.Items), p.Next, p.Total, err)
	}

	p, err = s.ListTools(ctx, graph.ListQuery{Filter: graph.Filter{Statuses: []string{graph.StatusActive, graph.StatusDisabled}}})
	if err != nil || p.Total != 26 || len(p.Items) != 26 {
		t.Errorf("ListTools(active+disabled) total %d items %d, %v; want 26", p.Total, len(p.Items), err)
	}
	p, err = s.ListTools(ctx, graph.ListQuery{After: "zz", Limit: 10})
	if err != nil || len(p.Items) != 0 || p.Next != "" {
		t.Errorf("ListTools after the end = %v next %q, %v", summaryIDs(p.Items), p.Next, err)
	}
}

func testFilter(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	// Ten tools all close to e0, best first by id order: t0 is nearest.
	for i := 0; i < 10; i++ {
		v := mix(0, 1, 1+i%7, float32(i)*0.1)
		cat := "even"
		if i%2 == 1 {
			cat = "odd"
		}
		mod := fmt.Sprintf("mod%d", i%3)
		st := graph.StatusActive
		if i == 9 {
			st = graph.StatusDeprecated
		}
		put(t, s, mk(fmt.Sprintf("t%d", i), "DO", "Filter tool", cat, "filter tool", v, module(mod), status(st)))
	}
	q := unit(0)
	cases := []struct {
		name string
		f    graph.Filter
		k    int
		want []string
		all  []string // every tool passing the filter, when k cuts it
	}{
		{"zero filter is active only", graph.Filter{}, 20, []string{"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8"}, nil},
		{"statuses", graph.Filter{Statuses: []string{graph.StatusDeprecated}}, 20, []string{"t9"}, nil},
		{"categories", graph.Filter{Categories: []string{"odd"}}, 20, []string{"t1", "t3", "t5", "t7"}, nil},
		{"ids", graph.Filter{IDs: []string{"t7", "t2", "t9"}}, 20, []string{"t2", "t7"}, nil},
		{"modules", graph.Filter{Modules: []string{"mod1"}}, 20, []string{"t1", "t4", "t7"}, nil},
		{"combined", graph.Filter{Categories: []string{"even"}, Modules: []string{"mod0", "mod2"}}, 20, []string{"t0", "t2", "t6", "t8"}, nil},
		{"allow fills k", graph.Filter{Allow: func(ts *graph.ToolSummary) bool { return ts.ID >= "t5" }}, 3, []string{"t5", "t6", "t7"}, []string{"t5", "t6", "t7", "t8"}},
		{"allow with fewer than k", graph.Filter{Allow: func(ts *graph.ToolSummary) bool { return ts.ID == "t8" || ts.ID == "t9" }}, 3, []string{"t8"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := s.VectorSearch(ctx, q, tc.k, tc.f)
			if err != nil {
				t.Fatalf("VectorSearch: %v", err)
			}
			if !sameStrings(ids(hits), tc.want) {
				t.Errorf("VectorSearch = %v, want %v", ids(hits), tc.want)
			}
			th, err := s.TextSearch(ctx, "filter tool", tc.k, tc.f)
			if err != nil {
				t.Fatalf("TextSearch: %v", err)
			}
			// Every tool has the same text, so scores tie: check membership.
			all := tc.all
			if all == nil {
				all = tc.want
			}
			if len(th) != len(tc.want) {
				t.Errorf("TextSearch returned %d hits %v, want %d", len(th), ids(th), len(tc.want))
			}
			for _, h := range th {
				if !contains(all, h.Tool.ID) {
					t.Errorf("TextSearch returned %s, outside %v", h.Tool.ID, all)
				}
			}
		})
	}
}

// testFilterModuleNamespace: Filter.Modules matches a tool's module as
// graph.ModuleOf names it, the stored module or, for a tool that names
// none (an onboarded wrapper), the part of its id before the first ".".
// Every read path that takes a Filter must agree, or a listing with
// module=ns shows none of the tools a caller limited to ns sees.
func testFilterModuleNamespace(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	rel := relations(graph.Relation{Kind: graph.RelAlternative, Target: "ns.x"}, graph.Relation{Kind: graph.RelAlternative, Target: "ns.y"},
		graph.Relation{Kind: graph.RelAlternative, Target: "m.z"}, graph.Relation{Kind: graph.RelAlternative, Target: "bare"},
		graph.Relation{Kind: graph.RelAlternative, Target: "ns.w.deep"})
	about := entities(graph.EntityRef{Name: "spaces"})
	put(t, s,
		mk("ns.x", "DO", "Space tool", "c", "space tool", mix(0, 1, 1, 0.1), about),              // no module: namespace ns
		mk("ns.y", "DO", "Space tool", "c", "space tool", mix(0, 1, 1, 0.2), module("m"), about), // module m, though its id says ns
		mk("m.z", "DO", "Space tool", "c", "space tool", mix(0, 1, 1, 0.3), module("m"), about),  // module m
		mk("bare", "DO", "Space tool", "c", "space tool", mix(0, 1, 1, 0.4), about),              // no module, no namespace
		mk("ns.w.deep", "DO", "Space tool", "c", "space tool", mix(0, 1, 1, 0.5), about),         // namespace ns (before the first ".")
		mk("from", "DO", "Space origin", "c", "origin", unit(5), rel),
	)
	for _, tc := range []struct {
		modules []string
		want    []string
	}{
		{[]string{"ns"}, []string{"ns.w.deep", "ns.x"}},
		{[]string{"m"}, []string{"m.z", "ns.y"}},
		{[]string{"ns", "m"}, []string{"m.z", "ns.w.deep", "ns.x", "ns.y"}},
		{[]string{"bare"}, nil},
		{[]string{"ns.x"}, nil},
		{[]string{"ns.w"}, nil},
	} {
		t.Run(fmt.Sprint(tc.modules), func(t *testing.T) {
			sameSet := func(got, want []string) bool {
				got, want = slices.Clone(got), slices.Clone(want)
				slices.Sort(got)
				slices.Sort(want)
				return slices.Equal(got, want)
			}
			f := graph.Filter{Modules: tc.modules}
			p, err := s.ListTools(ctx, graph.ListQuery{Filter: f})
			if err != nil {
				t.Fatalf("ListTools: %v", err)
			}
			if !sameSet(summaryIDs(p.Items), tc.want) || p.Total != len(tc.want) {
				t.Errorf("ListTools = %v (total %d), want %v", summaryIDs(p.Items), p.Total, tc.want)
			}
			for _, it := range p.Items {
				if m := graph.ModuleOf(&it); !contains(tc.modules, m) {
					t.Errorf("ListTools returned %s of module %q, outside %v", it.ID, m, tc.modules)
				}
			}
			vh, err := s.VectorSearch(ctx, unit(0), 10, f)
			if err != nil {
				t.Fatalf("VectorSearch: %v", err)
			}
			if !sameSet(ids(vh), tc.want) {
				t.Errorf("VectorSearch = %v, want %v", ids(vh), tc.want)
			}
			th, err := s.TextSearch(ctx, "space tool", 10, f)
			if err != nil {
				t.Fatalf("TextSearch: %v", err)
			}
			if !sameSet(ids(th), tc.want) {
				t.Errorf("TextSearch = %v, want %v", ids(th), tc.want)
			}
			rh, err := s.Related(ctx, "from", graph.RelAlternative, 10, f)
			if err != nil {
				t.Fatalf("Related: %v", err)
			}
			if !sameSet(ids(rh), tc.want) {
				t.Errorf("Related = %v, want %v", ids(rh), tc.want)
			}
			eh, err := s.ToolsNearEntities(ctx, []string{"spaces"}, 1, f)
			if err != nil {
				t.Fatalf("ToolsNearEntities: %v", err)
			}
			var near []string
			for _, h := range eh {
				near = append(near, h.ToolID)
			}
			if !sameSet(near, tc.want) {
				t.Errorf("ToolsNearEntities = %v, want %v", near, tc.want)
			}
		})
	}
}

func testRelated(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	put(t, s,
		mk("flight.search", "SEARCH_FLIGHTS", "Flight Search", "travel", "Search flights.", unit(0),
			relations(
				graph.Relation{Kind: graph.RelPairsWith, Target: "hotel.book", Score: 0.4, Sequence: "after"},
				graph.Relation{Kind: graph.RelPairsWith, Target: "flight.book", Score: 0.9, Sequence: "after"},
				graph.Relation{Kind: graph.RelPairsWith, Target: "car.rent", Score: 0.6, Sequence: "parallel"},
				graph.Relation{Kind: graph.RelDependsOn, Target: "auth.login"},
				graph.Relation{Kind: graph.RelAlternative, Target: "flight.search.v2"},
			)),
		mk("hotel.book", "BOOK_HOTEL", "Hotel", "travel", "Book hotels.", unit(1)),
		mk("flight.book", "BOOK_FLIGHT", "Flight Booking", "travel", "Book flights.", unit(2)),
		mk("flight.search.v2", "SEARCH_FLIGHTS", "Flight Search v2", "travel", "Search flights, faster.", unit(3)),
		mk("trains.search", "SEARCH_TRAINS", "Train Search", "travel", "Search trains.", unit(4),
			relations(graph.Relation{Kind: graph.RelAlternative, Target: "flight.search"})),
	)
	hits, err := s.Related(ctx, "flight.search", graph.RelPairsWith, 10, graph.Filter{})
	if err != nil {
		t.Fatalf("Related(PAIRS_WITH): %v", err)
	}
	// car.rent is not registered yet: its edge is kept but hidden.
	if !sameStrings(ids(hits), []string{"flight.book", "hotel.book"}) || !approx(hits[0].Score, 0.9, 1e-9) || !approx(hits[1].Score, 0.4, 1e-9) {
		t.Errorf("PAIRS_WITH = %+v, want flight.book(0.9), hotel.book(0.4)", hits)
	}
	put(t, s, mk("car.rent", "RENT_CAR", "Car Rental", "travel", "Rent cars.", unit(5)))
	hits, _ = s.Related(ctx, "flight.search", graph.RelPairsWith, 10, graph.Filter{})
	if !sameStrings(ids(hits), []string{"flight.book", "car.rent", "hotel.book"}) {
		t.Errorf("PAIRS_WITH after registering car.rent = %v", ids(hits))
	}
	if hits, _ := s.Related(ctx, "flight.search", graph.RelPairsWith, 2, graph.Filter{}); !sameStrings(ids(hits), []string{"flight.book", "car.rent"}) {
		t.Errorf("PAIRS_WITH limit 2 = %v", ids(hits))
	}
	allow := graph.Filter{Allow: func(ts *graph.ToolSummary) bool { return ts.ID != "flight.book" }}
	if hits, _ := s.Related(ctx, "flight.search", graph.RelPairsWith, 2, allow); !sameStrings(ids(hits), []string{"car.rent", "hotel.book"}) {
		t.Errorf("PAIRS_WITH with Allow, limit 2 = %v", ids(hits))
	}

	if hits, _ := s.Related(ctx, "flight.search", graph.RelDependsOn, 10, graph.Filter{}); len(hits) != 0 {
		t.Errorf("DEPENDS_ON to an unregistered tool returned %v", ids(hits))
	}
	put(t, s, mk("auth.login", "LOGIN", "Login", "auth", "Log in.", unit(6)))
	if hits, _ := s.Related(ctx, "flight.search", graph.RelDependsOn, 10, graph.Filter{}); !sameStrings(ids(hits), []string{"auth.login"}) {
		t.Errorf("DEPENDS_ON = %v, want [auth.login]", ids(hits))
	}
	// DEPENDS_ON is directed.
	if hits, _ := s.Related(ctx, "auth.login", graph.RelDependsOn, 10, graph.Filter{}); len(hits) != 0 {
		t.Errorf("DEPENDS_ON followed backwards: %v", ids(hits))
	}

	alt, err := s.Related(ctx, "flight.search", graph.RelAlternative, 10, graph.Filter{})
	if err != nil {
		t.Fatalf("Related(ALTERNATIVE_TO): %v", err)
	}
	got := ids(alt)
	sort.Strings(got)
	if !sameStrings(got, []string{"flight.search.v2", "trains.search"}) {
		t.Errorf("ALTERNATIVE_TO (both directions) = %v", got)
	}
	if hits, _ := s.Related(ctx, "flight.search.v2", graph.RelAlternative, 10, graph.Filter{}); !sameStrings(ids(hits), []string{"flight.search"}) {
		t.Errorf("ALTERNATIVE_TO is not symmetric: %v", ids(hits))
	}
	if err := s.SetStatus(ctx, "trains.search", graph.StatusDisabled, ""); err != nil {
		t.Fatal(err)
	}
	if hits, _ := s.Related(ctx, "flight.search", graph.RelAlternative, 10, graph.Filter{}); !sameStrings(ids(hits), []string{"flight.search.v2"}) {
		t.Errorf("ALTERNATIVE_TO returned a disabled tool: %v", ids(hits))
	}

	if _, err := s.Related(ctx, "nope", graph.RelPairsWith, 10, graph.Filter{}); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("Related(unknown): err = %v, want ErrNotFound", err)
	}
}

func testVectorSearch(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	put(t, s,
		mk("a", "A", "a", "c", "d", unit(0)),
		mk("b", "B", "b", "c", "d", mix(0, 3, 1, 1)),
		mk("c", "C", "c", "c", "d", mix(0, 1, 1, 1)),
		mk("d", "D", "d", "c", "d", unit(1)),
		mk("e", "E", "e", "c", "d", mix(0, -1, 2, 0.2)),
	)
	// A non-unit query: scores must still be cosine similarities.
	q := []float32{2, 0, 0, 0, 0, 0, 0, 0}
	hits, err := s.VectorSearch(ctx, q, 5, graph.Filter{})
	if err != nil {
		t.Fatalf("VectorSearch: %v", err)
	}
	if !sameStrings(ids(hits), []string{"a", "b", "c", "d", "e"}) {
		t.Fatalf("order = %v, want a b c d e", ids(hits))
	}
	want := []float64{1, 3 / norm([]float32{3, 1}), 1 / norm([]float32{1, 1}), 0, -1 / norm([]float32{1, 0.2})}
	for i, h := range hits {
		if !approx(h.Score, want[i], 1e-4) {
			t.Errorf("score[%s] = %v, want cosine %v", h.Tool.ID, h.Score, want[i])
		}
		if h.Tool.Name == "" || h.Tool.Status != graph.StatusActive {
			t.Errorf("hit summary incomplete: %+v", h.Tool)
		}
	}
	if hits, _ := s.VectorSearch(ctx, q, 2, graph.Filter{}); !sameStrings(ids(hits), []string{"a", "b"}) {
		t.Errorf("k=2 = %v", ids(hits))
	}
	if _, err := s.VectorSearch(ctx, []float32{1, 2, 3}, 2, graph.Filter{}); !errors.Is(err, graph.ErrDimension) {
		t.Errorf("wrong query dimension: err = %v, want ErrDimension", err)
	}
}

func textFixture(t *testing.T, s graph.Store) {
	put(t, s,
		mk("fx.convert", "CONVERT_CURRENCY", "Currency Converter", "finance",
			"Convert an amount between two currencies at the live exchange rate.", unit(0),
			tags("money", "exchange"), useCases("how many euros is 100 dollars")),
		mk("restaurant.reserve", "MAKE_RESERVATION", "Table Reservation", "dining",
			"Reserve a table at a restaurant for a party.", unit(1),
			tags("restaurant", "booking"), entities(graph.EntityRef{Name: "OpenTable", Type: "Platform"})),
		mk("weather.now", "GET_WEATHER", "Current Weather", "weather",
			"Current conditions for a city. Mentions currency once in passing.", unit(2),
			tags("forecast")),
		mk("files.read", "READ_FILE", "File Reader", "files",
			"Read a file's bytes from the workspace.", unit(3), tags("io")),
	)
}

func testTextSearch(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	textFixture(t, s)
	cases := []struct {
		query string
		first string
	}{
		{"currency", "fx.convert"}, // name beats a passing mention in a description
		{"make reservation", "restaurant.reserve"},
		{"MAKE_RESERVATION", "restaurant.reserve"},
		{"reserve a table for dinner", "restaurant.reserve"},
		{"opentable", "restaurant.reserve"},
		{"how many euros is 100 dollars?", "fx.convert"},
		{"weather forecast", "weather.now"},
		{"Read the FILE", "files.read"},
	}
	for _, tc := range cases {
		hits, err := s.TextSearch(ctx, tc.query, 3, graph.Filter{})
		if err != nil {
			t.Errorf("TextSearch(%q): %v", tc.query, err)
			continue
		}
		if len(hits) == 0 || hits[0].Tool.ID != tc.first {
			t.Errorf("TextSearch(%q) = %v, want %s first", tc.query, ids(hits), tc.first)
		}
		for i, h := range hits {
			if h.Score <= 0 {
				t.Errorf("TextSearch(%q): score %v is not positive", tc.query, h.Score)
			}
			if i > 0 && h.Score > hits[i-1].Score {
				t.Errorf("TextSearch(%q): scores not descending: %v", tc.query, hits)
			}
		}
	}
	hits, _ := s.TextSearch(ctx, "currency", 10, graph.Filter{})
	if !sameStrings(ids(hits), []string{"fx.convert", "weather.now"}) {
		t.Errorf("TextSearch(currency) = %v, want fx.convert then weather.now", ids(hits))
	}
	if hits, _ := s.TextSearch(ctx, "currency", 1, graph.Filter{}); len(hits) != 1 {
		t.Errorf("k=1 returned %d hits", len(hits))
	}
	for _, q := range []string{"", "   ", "xylophone"} {
		hits, err := s.TextSearch(ctx, q, 5, graph.Filter{})
		if err != nil || len(hits) != 0 {
			t.Errorf("TextSearch(%q) = %v, %v; want no hits, no error", q, ids(hits), err)
		}
	}
}

func testTextSearchHostile(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	textFixture(t, s)
	hostile := []string{
		`"`, `""`, `'`, `*`, `-`, `(`, `)`, `()`, `NEAR`, `NEAR(currency file)`, `AND`, `OR`, `NOT`,
		`currency AND`, `OR currency`, `NOT currency`, `-currency`, `currency*`, `"currency`, `currency"`,
		`cur"ren"cy`, `name:currency`, `{name verb}: currency`, `^currency`, `currency +file`, `currency~2`,
		`currency^3`, `\currency`, `currency && file || !weather`, `[currency TO file]`, `currency?`,
		`'; DROP TABLE tools; --`, `" OR 1=1 --`, `)) OR ((`, `currency) OR (file`, `/currency/`,
		`%_%`, "currency\x00file", `NEAR/3`, `currency NEAR/2 file`, `:`, `::`, `@`, `#`, `$$`, `——`,
	}
	for _, q := range hostile {
		hits, err := s.TextSearch(ctx, q, 5, graph.Filter{})
		if err != nil {
			t.Errorf("TextSearch(%q): %v", q, err)
			continue
		}
		for _, h := range hits {
			if h.Tool.ID == "" {
				t.Errorf("TextSearch(%q): empty hit", q)
			}
		}
	}
	// The words inside hostile syntax are still searched as words.
	for _, q := range []string{`"currency`, `currency*`, `-currency`, `name:currency`, `(currency)`, `NOT currency`} {
		hits, err := s.TextSearch(ctx, q, 5, graph.Filter{})
		if err != nil || len(hits) == 0 || hits[0].Tool.ID != "fx.convert" {
			t.Errorf("TextSearch(%q) = %v, %v; want fx.convert first", q, ids(hits), err)
		}
	}
	// The store is intact afterwards.
	if st, err := s.Stats(ctx); err != nil || st.Tools != 4 {
		t.Errorf("Stats after hostile queries = %+v, %v", st, err)
	}
}

func testEntities(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	put(t, s,
		mk("swa.book", "BOOK_FLIGHT", "Southwest Booking", "travel", "Book Southwest flights.", unit(0),
			entities(graph.EntityRef{Name: "Southwest", Type: "Airline", Aliases: []string{"SWA", "Southwest Airlines"}})),
		mk("dl.book", "BOOK_FLIGHT", "Delta Booking", "travel", "Book Delta flights.", unit(1),
			entities(graph.EntityRef{Name: "Delta", Type: "Airline"}, graph.EntityRef{Name: "Atlanta", Type: "City"})),
	)
	all, err := s.Entities(ctx)
	if err != nil {
		t.Fatalf("Entities: %v", err)
	}
	var keys []string
	for _, e := range all {
		keys = append(keys, e.Key)
	}
	if !sameStrings(keys, []string{"airline", "atlanta", "city", "delta", "southwest"}) {
		t.Errorf("entity keys = %v", keys)
	}
	for _, e := range all {
		if e.Key == "southwest" {
			if e.Name != "Southwest" || e.Type != "Airline" {
				t.Errorf("southwest = %+v", e)
			}
			a := append([]string(nil), e.Aliases...)
			sort.Strings(a)
			if !sameStrings(a, []string{"SWA", "Southwest Airlines"}) {
				t.Errorf("southwest aliases = %v", e.Aliases)
			}
		}
		if e.Key == "airline" && e.Name != "Airline" {
			t.Errorf("type entity = %+v", e)
		}
	}
	cases := []struct {
		names []string
		want  []string
	}{
		{[]string{"SOUTHWEST"}, []string{"southwest"}},
		{[]string{"swa"}, []string{"southwest"}},
		{[]string{"southwest airlines", "DELTA"}, []string{"delta", "southwest"}},
		{[]string{"airline"}, []string{"airline"}},
		{[]string{"United"}, nil},
		{nil, nil},
	}
	for _, tc := range cases {
		got, err := s.FindEntities(ctx, tc.names)
		if err != nil {
			t.Errorf("FindEntities(%v): %v", tc.names, err)
			continue
		}
		var k []string
		for _, e := range got {
			k = append(k, e.Key)
		}
		sort.Strings(k)
		if !sameStrings(k, tc.want) {
			t.Errorf("FindEntities(%v) = %v, want %v", tc.names, k, tc.want)
		}
	}
}

func testToolsNearEntities(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	put(t, s,
		mk("swa.book", "BOOK_FLIGHT", "Southwest Booking", "travel", "d", unit(0),
			entities(graph.EntityRef{Name: "Southwest", Type: "Airline"})),
		mk("dl.book", "BOOK_FLIGHT", "Delta Booking", "travel", "d", unit(1),
			entities(graph.EntityRef{Name: "Delta", Type: "Airline"})),
		mk("airlines.list", "LIST_AIRLINES", "Airline Directory", "travel", "d", unit(2),
			entities(graph.EntityRef{Name: "Airline"})),
		mk("both.compare", "COMPARE", "Compare Fares", "travel", "d", unit(3),
			entities(graph.EntityRef{Name: "Southwest", Type: "Airline"}, graph.EntityRef{Name: "Delta", Type: "Airline"})),
		mk("weather", "GET_WEATHER", "Weather", "weather", "d", unit(4),
			entities(graph.EntityRef{Name: "Denver", Type: "City"})),
	)
	type hit struct {
		id    string
		depth int
	}
	run := func(keys []string, depth int, f graph.Filter) []hit {
		t.Helper()
		got, err := s.ToolsNearEntities(ctx, keys, depth, f)
		if err != nil {
			t.Fatalf("ToolsNearEntities(%v, %d): %v", keys, depth, err)
		}
		out := make([]hit, 0, len(got))
		seen := map[string]bool{}
		for _, h := range got {
			if seen[h.ToolID] {
				t.Errorf("tool %s returned twice", h.ToolID)
			}
			seen[h.ToolID] = true
			out = append(out, hit{h.ToolID, h.Depth})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
		return out
	}
	check := func(name string, got, want []hit) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("southwest depth 1", run([]string{"southwest"}, 1, graph.Filter{}),
		[]hit{{"both.compare", 1}, {"swa.book", 1}})
	check("southwest depth 2", run([]string{"Southwest"}, 2, graph.Filter{}),
		[]hit{{"airlines.list", 2}, {"both.compare", 1}, {"swa.book", 1}})
	check("southwest depth 3", run([]string{"southwest"}, 3, graph.Filter{}),
		[]hit{{"airlines.list", 2}, {"both.compare", 1}, {"dl.book", 3}, {"swa.book", 1}})
	check("airline depth 2 (IS_A backwards)", run([]string{"airline"}, 2, graph.Filter{}),
		[]hit{{"airlines.list", 1}, {"both.compare", 2}, {"dl.book", 2}, {"swa.book", 2}})
	check("two starts", run([]string{"delta", "denver"}, 1, graph.Filter{}),
		[]hit{{"both.compare", 1}, {"dl.book", 1}, {"weather", 1}})
	check("filter", run([]string{"airline"}, 2, graph.Filter{Allow: func(ts *graph.ToolSummary) bool { return ts.ID != "dl.book" }}),
		[]hit{{"airlines.list", 1}, {"both.compare", 2}, {"swa.book", 2}})
	check("unknown entity", run([]string{"united"}, 3, graph.Filter{}), []hit{})

	got, _ := s.ToolsNearEntities(ctx, []string{"southwest"}, 1, graph.Filter{})
	for _, h := range got {
		if h.EntityKey != "southwest" {
			t.Errorf("EntityKey = %q, want southwest", h.EntityKey)
		}
	}
}

func testNeighbourhood(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	put(t, s,
		mk("swa.book", "BOOK_FLIGHT", "Southwest Booking", "travel", "d", unit(0),
			tags("flights"), groups("travel"), module("airline"),
			entities(graph.EntityRef{Name: "Southwest", Type: "Airline"}),
			relations(graph.Relation{Kind: graph.RelPairsWith, Target: "hotel.book", Score: 0.5})),
		mk("hotel.book", "BOOK_HOTEL", "Hotel Booking", "lodging", "d", unit(1), groups("travel")),
		mk("dl.book", "BOOK_FLIGHT", "Delta Booking", "travel", "d", unit(2), groups("travel")),
	)
	sg, err := s.Neighbourhood(ctx, "swa.book", 0)
	if err != nil {
		t.Fatalf("Neighbourhood(0): %v", err)
	}
	if len(sg.Nodes) != 1 || sg.Nodes[0] != (graph.Node{Label: "Tool", Key: "swa.book"}) || len(sg.Edges) != 0 {
		t.Errorf("depth 0 = %+v, want the tool alone", sg)
	}

	sg, err = s.Neighbourhood(ctx, "swa.book", 1)
	if err != nil {
		t.Fatalf("Neighbourhood(1): %v", err)
	}
	nodes := map[graph.Node]bool{}
	for _, n := range sg.Nodes {
		nodes[n] = true
	}
	for _, n := range []graph.Node{
		{Label: "Tool", Key: "swa.book"}, {Label: "Verb", Key: "BOOK_FLIGHT"}, {Label: "Category", Key: "travel"},
		{Label: "Tag", Key: "flights"}, {Label: "Group", Key: "travel"}, {Label: "Module", Key: "airline"},
		{Label: "Entity", Key: "southwest"}, {Label: "Tool", Key: "hotel.book"},
	} {
		if !nodes[n] {
			t.Errorf("depth 1 lacks node %+v; got %+v", n, sg.Nodes)
		}
	}
	for _, n := range []graph.Node{{Label: "Tool", Key: "dl.book"}, {Label: "Entity", Key: "airline"}} {
		if nodes[n] {
			t.Errorf("depth 1 has %+v, which is two hops away", n)
		}
	}
	edges := map[graph.Edge]bool{}
	for _, e := range sg.Edges {
		edges[e] = true
		if !nodes[e.From] || !nodes[e.To] {
			t.Errorf("edge %+v has an endpoint outside the node set", e)
		}
	}
	sw := graph.Node{Label: "Tool", Key: "swa.book"}
	for _, e := range []graph.Edge{
		{From: sw, Type: "PROVIDES", To: graph.Node{Label: "Verb", Key: "BOOK_FLIGHT"}},
		{From: sw, Type: "IN", To: graph.Node{Label: "Category", Key: "travel"}},
		{From: sw, Type: "TAGGED", To: graph.Node{Label: "Tag", Key: "flights"}},
		{From: sw, Type: "MEMBER_OF", To: graph.Node{Label: "Group", Key: "travel"}},
		{From: sw, Type: "ABOUT", To: graph.Node{Label: "Entity", Key: "southwest"}},
		{From: graph.Node{Label: "Module", Key: "airline"}, Type: "OFFERS", To: sw},
		{From: sw, Type: "PAIRS_WITH", To: graph.Node{Label: "Tool", Key: "hotel.book"}},
	} {
		if !edges[e] {
			t.Errorf("depth 1 lacks edge %+v", e)
		}
	}

	sg, err = s.Neighbourhood(ctx, "swa.book", 2)
	if err != nil {
		t.Fatalf("Neighbourhood(2): %v", err)
	}
	nodes = map[graph.Node]bool{}
	for _, n := range sg.Nodes {
		nodes[n] = true
	}
	for _, n := range []graph.Node{{Label: "Tool", Key: "dl.book"}, {Label: "Entity", Key: "airline"}, {Label: "Category", Key: "lodging"}} {
		if !nodes[n] {
			t.Errorf("depth 2 lacks %+v", n)
		}
	}
	found := false
	for _, e := range sg.Edges {
		if e == (graph.Edge{From: graph.Node{Label: "Entity", Key: "southwest"}, Type: "IS_A", To: graph.Node{Label: "Entity", Key: "airline"}}) {
			found = true
		}
	}
	if !found {
		t.Errorf("depth 2 lacks the IS_A edge: %+v", sg.Edges)
	}

	if _, err := s.Neighbourhood(ctx, "nope", 1); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("Neighbourhood(unknown): err = %v, want ErrNotFound", err)
	}
}
