package retrieval_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/retrievaltest"
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
