package retrieval_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/retrievaltest"
	"github.com/toolsmith/toolsmith/tool"
)

func historyCatalogue() []tool.Manifest {
	return []tool.Manifest{
		retrievaltest.Manifest("fx.convert", "CONVERT_CURRENCY", "finance", "Convert an amount of money between currencies using exchange rates."),
		retrievaltest.Manifest("food.reserve", "MAKE_RESERVATION", "dining", "Reserve a table at a restaurant for a number of guests."),
		retrievaltest.Manifest("food.menu", "GET_MENU", "dining", "Show the menu and dishes of a restaurant."),
		retrievaltest.Manifest("trip.flight", "BOOK_FLIGHT", "travel", "Book a seat on a flight between two airports."),
		retrievaltest.Manifest("trip.hotel", "BOOK_HOTEL", "travel", "Book a hotel room for some nights."),
		retrievaltest.Manifest("sky.weather", "GET_WEATHER", "weather", "Forecast the weather, rain and temperature for a city."),
		retrievaltest.Manifest("doc.translate", "TRANSLATE_TEXT", "language", "Translate a text between two languages."),
		retrievaltest.Manifest("doc.summarise", "SUMMARISE_TEXT", "language", "Summarise a long text into a few sentences."),
	}
}

// TestSparseHistoryLeavesOtherQueriesAlone checks, on a small catalogue,
// that sparse history stays local: one tool used many times must neither
// enter nor reorder the results of queries unrelated to its uses (each
// ranks exactly as it did zero-shot), while queries like its uses do rank
// it first.
func TestSparseHistoryLeavesOtherQueriesAlone(t *testing.T) {
	ctx := context.Background()
	caller := access.Caller{UserID: "u", Level: "owner", Groups: []string{access.Wildcard}}
	unrelated := []string{
		"book a table for two", "reserve a table at a restaurant tonight", "what will the weather be in paris",
		"translate this letter into german", "book a hotel room in rome", "summarise this long report",
	}
	rank := func(svc *retrieval.Service, q string) []retrieval.Hit {
		t.Helper()
		hits, _, err := svc.Rank(ctx, retrieval.Query{Text: q, Strategy: retrieval.StrategyHybrid, MaxTools: 8, Caller: caller})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	cold, _ := newService(t, retrieval.Options{CacheSize: -1}, historyCatalogue()...)
	zero := map[string][]string{}
	for _, q := range unrelated {
		zero[q] = ids(rank(cold, q))
	}

	hot, _ := newService(t, retrieval.Options{CacheSize: -1}, historyCatalogue()...)
	var evs []retrieval.Event
	for i := range 20 {
		evs = append(evs, retrieval.Event{ToolID: "fx.convert", Success: true, SessionID: fmt.Sprintf("s%d", i),
			Query: fmt.Sprintf("convert %d dollars to euros at the exchange rate", 10*(i+1))})
	}
	if err := hot.RecordEvents(ctx, caller, evs); err != nil {
		t.Fatal(err)
	}
	for _, q := range unrelated {
		hits := rank(hot, q)
		if got := ids(hits); !slices.Equal(got, zero[q]) {
			t.Errorf("%q: with history %v, zero-shot %v; want the same ranking", q, got, zero[q])
		}
		for _, h := range hits {
			if b := h.Breakdown; b.Usage.Weighted != 0 || b.Neighbours.Weighted != 0 || b.QueryLog.Weighted != 0 || b.Popularity.Weighted != 0 {
				t.Errorf("%q: %s gains usage evidence %+v", q, h.Tool.ID, b)
			}
		}
	}
	hits := rank(hot, "convert 75 dollars to euros")
	if len(hits) == 0 || hits[0].Tool.ID != "fx.convert" || hits[0].Breakdown.Neighbours.Weighted <= 0 {
		t.Fatalf("a query like the uses ranks %v (%+v); want fx.convert first, with the neighbours' vote", ids(hits), hits[0].Breakdown)
	}
}

// TestLoneNeighbourVoteIsNotInflated: the reported fault was a raw
// neighbours' vote of 1.10 (three neighbours at about .37) that became the
// largest part of an unrelated tool's score because it was the only tool
// with history. Neighbours below the evidence floor (the query's best cosine
// to a tool's description, and at least Options.NeighbourFloor) do not vote.
func TestLoneNeighbourVoteIsNotInflated(t *testing.T) {
	ctx := context.Background()
	caller := access.Caller{UserID: "u", Level: "owner", Groups: []string{access.Wildcard}}
	svc, _ := newService(t, retrieval.Options{CacheSize: -1, Plausible: -1}, historyCatalogue()...)
	var evs []retrieval.Event
	for i := range 3 {
		evs = append(evs, retrieval.Event{ToolID: "fx.convert", Success: true, SessionID: fmt.Sprintf("s%d", i),
			Query: fmt.Sprintf("convert %d dollars for two people", i+1)})
	}
	if err := svc.RecordEvents(ctx, caller, evs); err != nil {
		t.Fatal(err)
	}
	hits, _, err := svc.Rank(ctx, retrieval.Query{Text: "reserve a table for two", Strategy: retrieval.StrategyHybrid, MaxTools: 8, Caller: caller})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Tool.ID != "food.reserve" {
		t.Fatalf("hits = %v, want food.reserve first", ids(hits))
	}
	for _, h := range hits {
		if h.Tool.ID == "fx.convert" && h.Breakdown.Neighbours.Weighted != 0 {
			t.Fatalf("fx.convert's neighbours' vote = %+v; its past queries are less like the query than the best description", h.Breakdown.Neighbours)
		}
	}
}

// TestNearParaphraseAdmitsACandidateBelowTheGate: a past query at cosine
// ≥ Options.Admit admits the tool it served wherever the query's own
// signals rank it, not only when the sources did not return it. Here the
// tool is a candidate below the one plausible place (Plausible 1), and a
// repeat of its served query lifts it by the neighbours' vote.
func TestNearParaphraseAdmitsACandidateBelowTheGate(t *testing.T) {
	ctx := context.Background()
	caller := access.Caller{UserID: "u", Level: "owner", Groups: []string{access.Wildcard}}
	const served = "summarise this long report for the german office"
	svc, _ := newService(t, retrieval.Options{CacheSize: -1, Plausible: 1}, historyCatalogue()...)
	rank := func() []retrieval.Hit {
		t.Helper()
		hits, _, err := svc.Rank(ctx, retrieval.Query{Text: served, Strategy: retrieval.StrategyHybrid, MaxTools: 8, Caller: caller})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	before := rank()
	if len(before) < 2 || before[0].Tool.ID == "doc.translate" || !slices.Contains(ids(before), "doc.translate") {
		t.Fatalf("zero-shot ranking %v: the test needs doc.translate among the candidates, below the first place", ids(before))
	}
	var evs []retrieval.Event
	for i := range 3 {
		evs = append(evs, retrieval.Event{ToolID: "doc.translate", Success: true, SessionID: fmt.Sprintf("s%d", i), Query: served})
	}
	if err := svc.RecordEvents(ctx, caller, evs); err != nil {
		t.Fatal(err)
	}
	for _, h := range rank() {
		if h.Tool.ID == "doc.translate" {
			if h.Breakdown.Neighbours.Weighted <= 0 {
				t.Fatalf("doc.translate's neighbours' vote = %+v; a repeat of its served query admits it", h.Breakdown.Neighbours)
			}
			return
		}
	}
	t.Fatal("doc.translate left the candidates")
}

// TestDenseHistoryLiftsOnlyRelatedTools: when every tool has served
// queries the gate on usage evidence opens, and the learned signals weigh
// every candidate's history on the same footing. They still only reach the
// tools the query is about (Options.RelatedMargin): a much-used tool whose
// description, usage centroid and past queries are all far from the query
// gains nothing, while the tool the query is about does. Without the bound
// the same history lifts the much-used tool.
func TestDenseHistoryLiftsOnlyRelatedTools(t *testing.T) {
	ctx := context.Background()
	caller := access.Caller{UserID: "u", Level: "owner", Groups: []string{access.Wildcard}}
	uses := map[string][]string{
		"fx.convert":    {"convert dollars to euros", "change pounds into yen at the exchange rate", "how much is 50 francs in dollars"},
		"food.reserve":  {"reserve a table for four tonight", "book a restaurant table for dinner"},
		"food.menu":     {"show me the dishes of this restaurant", "what is on the menu"},
		"trip.flight":   {"book a flight to madrid", "a seat on the morning flight"},
		"trip.hotel":    {"book a hotel room for three nights", "find me a room in a hotel"},
		"sky.weather":   {"will it rain tomorrow", "temperature in london this weekend"},
		"doc.translate": {"translate this sentence into french", "say thank you in japanese"},
		"doc.summarise": {"summarise this article", "give me the gist of this report in a few sentences"},
	}
	var evs []retrieval.Event
	for id, qs := range uses {
		n := 1
		if id == "fx.convert" {
			n = 10 // much used
		}
		for i := range n {
			for _, q := range qs {
				evs = append(evs, retrieval.Event{ToolID: id, Success: true, SessionID: fmt.Sprintf("%s-%d", id, i), Query: q})
			}
		}
	}
	const q = "summarise this long report"
	lift := func(h retrieval.Hit) float64 {
		b := h.Breakdown
		return b.Usage.Weighted + b.Neighbours.Weighted + b.QueryLog.Weighted + b.Popularity.Weighted
	}
	for _, tc := range []struct {
		name   string
		margin float64
		want   bool // whether fx.convert gains from its history
	}{{"default", 0, false}, {"no bound", -1, true}} {
		svc, _ := newService(t, retrieval.Options{CacheSize: -1, RelatedMargin: tc.margin}, historyCatalogue()...)
		if err := svc.RecordEvents(ctx, caller, evs); err != nil {
			t.Fatal(err)
		}
		hits, _, err := svc.Rank(ctx, retrieval.Query{Text: q, Strategy: retrieval.StrategyHybrid, MaxTools: 8, Caller: caller})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].Tool.ID != "doc.summarise" || lift(hits[0]) <= 0 {
			t.Fatalf("%s: %q ranks %v; want doc.summarise first, lifted by its history", tc.name, q, ids(hits))
		}
		for _, h := range hits {
			if h.Tool.ID == "fx.convert" && (lift(h) > 0) != tc.want {
				t.Errorf("%s: fx.convert's history lifts it by %.3f for %q (%+v); want a lift: %v", tc.name, lift(h), q, h.Breakdown, tc.want)
			}
		}
	}
}
