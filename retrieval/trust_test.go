package retrieval_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/retrievaltest"
	"github.com/toolsmith/toolsmith/tool"
)

// TestReportsNeedRecentObservedRuns: a user's report is learned only when
// a run Toolsmith made for that user, of that tool, within
// retrieval.ReportWindow backs it; a reported success needs a successful
// run; a caller without a user id backs nothing; unbacked reports are not
// stored, so the tool's usage does not move.
func TestReportsNeedRecentObservedRuns(t *testing.T) {
	ctx := context.Background()
	emb := retrievaltest.Words{Dim: 64}
	st := retrievaltest.Store(t, emb)
	retrievaltest.Register(t, st, emb, retrievaltest.Reservation()...)
	clock := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	svc := retrieval.New(st, emb, retrieval.Options{Now: func() time.Time { return clock }})
	const id = "airline.book_seat"
	u := access.Caller{UserID: "u", Level: "user"}
	ok := retrieval.Event{ToolID: id, Query: "a seat to denver", Success: true}
	failed := retrieval.Event{ToolID: id, Query: "a seat to denver"}
	uses := func() graph.Usage {
		t.Helper()
		got, err := st.Usage(ctx, []string{id})
		if err != nil {
			t.Fatal(err)
		}
		return got[id]
	}
	report := func(c access.Caller, learned int, evs ...retrieval.Event) {
		t.Helper()
		before := uses()
		got, err := svc.Report(ctx, c, evs)
		if err != nil {
			t.Fatal(err)
		}
		if got.Recorded != len(evs) || got.Learned != learned || got.Unbacked != len(evs)-learned || (got.Unbacked > 0) != (got.Message != "") {
			t.Fatalf("%s reported %d events at %s: %+v; want %d learned", c.UserID, len(evs), clock.Format(time.RFC3339), got, learned)
		}
		if after := uses(); after.Uses != before.Uses+learned {
			t.Fatalf("%d learned reports moved the tool's uses %d -> %d", learned, before.Uses, after.Uses)
		}
	}
	report(u, 0, ok) // no run yet

	// A run Toolsmith made (RecordUsage: its origin is observed).
	if err := svc.RecordUsage(ctx, []graph.UsageEvent{{ToolID: id, UserID: "u", Success: true}}); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(retrieval.ReportWindow + time.Minute)
	report(u, 0, ok) // the run is too old to back a report

	if err := svc.RecordUsage(ctx, []graph.UsageEvent{{ToolID: id, UserID: "u", Success: false}}); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Hour)
	report(u, 0, ok)     // a failed run does not back a reported success
	report(u, 1, failed) // but does back a reported failure
	report(u, 0, failed) // once

	if err := svc.RecordUsage(ctx, []graph.UsageEvent{{ToolID: id, UserID: "u", Success: true}, {ToolID: id, UserID: "u", Success: true}}); err != nil {
		t.Fatal(err)
	}
	report(access.Caller{UserID: "v", Level: "user"}, 0, ok) // another user's runs back nothing of v's
	report(access.Caller{Level: "user"}, 0, ok)              // nor do they back a caller without a user id
	report(u, 2, ok, failed, ok)                             // two successful runs back two successes; the failure claims nothing left
	report(access.Caller{UserID: "ops", Level: "admin"}, 2, ok, failed)
}

// TestUsesTeachOnlyQueriesAboutTheirTool: a success outside an admin's
// import teaches its query only when the tool is among the catalogue's
// closest matches for it. A query like the currency tool (above
// ReportFloor) but far more like the hotel tool teaches the currency
// tool nothing: reported, it is unrelated (not stored); run, the run is a
// use without its query. With the similarity floor alone (TeachMargin <
// 0) the same query would teach, so the margin is what refuses it; a
// query about the currency tool teaches as ever.
func TestUsesTeachOnlyQueriesAboutTheirTool(t *testing.T) {
	ctx := context.Background()
	emb := retrievaltest.Words{Dim: 256}
	ms := moneyAndHotels()
	const hotel, money = "an amount of money between currencies: price of a hotel room per night in a city", "convert an amount of money between currencies"
	for _, c := range []struct {
		margin float64
		teach  []bool
	}{{-1, []bool{true, true}}, {0, []bool{false, true}}} {
		st := retrievaltest.Store(t, emb)
		retrievaltest.Register(t, st, emb, ms...)
		svc := retrieval.New(st, emb, retrieval.Options{TeachMargin: c.margin})
		got, err := svc.Teaches(ctx, []retrieval.Event{{ToolID: "fx.convert", Query: hotel, Success: true}, {ToolID: "fx.convert", Query: money, Success: true}})
		if err != nil || !slices.Equal(got, c.teach) {
			t.Fatalf("margin %g: teaches %v, %v; want %v", c.margin, got, err, c.teach)
		}
		if c.margin < 0 {
			continue
		}
		// Run by a signed-in user: the use is recorded, the hotel query is not.
		if err := svc.RecordUsage(ctx, []graph.UsageEvent{
			{ToolID: "fx.convert", UserID: "u", Level: "user", Query: hotel, Success: true},
			{ToolID: "fx.convert", UserID: "u", Level: "user", Query: money, Success: true},
			{ToolID: "fx.convert", UserID: "u", Level: "user", Success: true},
		}); err != nil {
			t.Fatal(err)
		}
		served, err := st.ServedQueriesAfter(ctx, 0, 10)
		if err != nil || len(served) != 1 || served[0].Query != money {
			t.Fatalf("served queries %+v, %v; want only the currency query", served, err)
		}
		// Reported by that user, backed by the runs: the hotel query is unrelated.
		tally, err := svc.Report(ctx, access.Caller{UserID: "u", Level: "user"}, []retrieval.Event{{ToolID: "fx.convert", Query: hotel, Success: true}})
		if err != nil || tally.Learned != 0 || tally.Unrelated != 1 || !strings.Contains(tally.Message, "not about the tool") {
			t.Fatalf("report of the hotel query: %+v, %v; want it unrelated", tally, err)
		}
	}
}

// TestUseNeverLiftsAToolOverAFarBetterMatch: however much a tool learned
// from use for a query (an admin imported thirty uses of the currency
// tool for a hotel question), it does not rise above a tool whose
// description is far more like the query (Options.UsageMargin); with the
// bound off, the same history puts it first, so the bound is what keeps
// the hotel tool there. The lifted tool keeps its place above the rest.
func TestUseNeverLiftsAToolOverAFarBetterMatch(t *testing.T) {
	ctx := context.Background()
	emb := retrievaltest.Words{Dim: 256}
	ms := append(moneyAndHotels(), retrievaltest.Manifest("mail.send", "SEND_EMAIL", "mail", "Send an email message to a recipient."))
	const q = "price of a hotel room per night in a city"
	var evs []retrieval.Event
	for i := range 30 {
		evs = append(evs, retrieval.Event{ToolID: "fx.convert", Query: q, Success: true, UserID: fmt.Sprintf("u%d", i)})
	}
	first := func(margin float64) []retrieval.Hit {
		t.Helper()
		st := retrievaltest.Store(t, emb)
		retrievaltest.Register(t, st, emb, ms...)
		svc := retrieval.New(st, emb, retrieval.Options{UsageMargin: margin})
		if err := svc.RecordEvents(ctx, access.Caller{UserID: "ops", Level: "admin"}, evs); err != nil {
			t.Fatal(err)
		}
		res, err := svc.Search(ctx, retrieval.Query{Text: q, MaxTools: 3})
		if err != nil {
			t.Fatal(err)
		}
		return res.Hits
	}
	if hits := first(-1); len(hits) < 2 || hits[0].Tool.ID != "fx.convert" {
		t.Fatalf("without the bound, the history should put fx.convert first: %v", ids(hits))
	}
	hits := first(0)
	if len(hits) < 3 || hits[0].Tool.ID != "stay.hotels" || hits[1].Tool.ID != "fx.convert" {
		t.Fatalf("with the default bound: %v; want stay.hotels, then fx.convert", ids(hits))
	}
	if hits[1].Breakdown.Learned() <= 0 || hits[1].Score >= hits[0].Score {
		t.Fatalf("fx.convert: learned %v, score %v against %v; want some use kept, under the hotel tool", hits[1].Breakdown.Learned(), hits[1].Score, hits[0].Score)
	}
}

// moneyAndHotels is a currency tool whose words a hotel question shares in
// part, and the hotel tool that question is about.
func moneyAndHotels() []tool.Manifest {
	return []tool.Manifest{
		retrievaltest.Manifest("fx.convert", "CONVERT_CURRENCY", "finance", "Convert an amount of money between currencies at the current price."),
		retrievaltest.Manifest("stay.hotels", "FIND_HOTEL", "travel", "Hotel rooms in a city: the price of a hotel room per night, hotel search and booking."),
	}
}
