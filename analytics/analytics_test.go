package analytics_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/analytics"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
)

type fakeRuns []analytics.Run

func (f fakeRuns) NovelVerbRuns(context.Context, time.Time, int) ([]analytics.Run, error) {
	return f, nil
}

func TestBuild(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "g.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: "m", Dimension: 2}); err != nil {
		t.Fatal(err)
	}
	for i, g := range [][]string{nil, {"travel"}, {"travel", "finance"}} {
		if _, err := st.UpsertTool(ctx, graph.Tool{ToolSummary: graph.ToolSummary{ID: fmt.Sprintf("t.%d", i), Verb: "DO", Name: "n",
			Category: "c", Status: graph.StatusActive, Groups: g}, Embedding: []float32{1, 0}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetStatus(ctx, "t.2", graph.StatusDeprecated, "old"); err != nil {
		t.Fatal(err)
	}
	var ev []graph.UsageEvent
	for i := 0; i < 6; i++ {
		ev = append(ev, graph.UsageEvent{ToolID: "t.0", Query: "  Convert   EUR ", Success: i < 2})
	}
	ev = append(ev, graph.UsageEvent{ToolID: "t.1", Query: "book a flight", Success: true})
	if err := st.RecordUsage(ctx, ev); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	runs := fakeRuns{{WorkflowID: "verb-convert", Verb: "CONVERT", Branch: "substitute", Status: "completed", Start: t0, Close: t0.Add(1500 * time.Millisecond)},
		{Verb: "SING", Branch: "no_capability", Status: "completed"},
		{Verb: "SING", Branch: "decompose", Status: "failed"}, {Verb: "FLY", Branch: "substitute", Status: "running"}}
	r, err := analytics.Build(ctx, st, runs, analytics.Options{Top: 5, Recent: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.RecentRuns) != 3 || r.RecentRuns[0].WorkflowID != "verb-convert" || r.RecentRuns[0].DurationMs != 1500 || r.RecentRuns[2].Status != "failed" {
		t.Errorf("recent runs (newest first, at most Recent): %+v", r.RecentRuns)
	}
	if r.Tools["active"] != 2 || r.Tools["deprecated"] != 1 || r.Groups["default"] != 1 || r.Groups["travel"] != 1 || r.Groups["finance"] != 0 {
		t.Errorf("catalogue: tools %v groups %v", r.Tools, r.Groups)
	}
	if r.Usage.Uses != 7 || r.Usage.Successes != 3 || r.Usage.ToolsUsed != 2 || len(r.MostUsed) != 2 || r.MostUsed[0].ToolID != "t.0" {
		t.Errorf("usage: %+v most used %+v", r.Usage, r.MostUsed)
	}
	if len(r.LowestSuccess) != 1 || r.LowestSuccess[0].ToolID != "t.0" || r.LowestSuccess[0].SuccessRate > 0.34 {
		t.Errorf("lowest success (tools with ≥5 uses): %+v", r.LowestSuccess)
	}
	if len(r.TopQueries) == 0 || r.TopQueries[0] != (analytics.Count{Key: "convert eur", Count: 2}) {
		t.Errorf("top queries (successful, normalised): %+v", r.TopQueries)
	}
	if r.Fulfilments.Total != 4 || r.Fulfilments.ByBranch["substitute"] != 2 || r.Fulfilments.ByStatus["failed"] != 1 {
		t.Errorf("fulfilments: %+v", r.Fulfilments)
	}
	if len(r.Unfulfilled) != 1 || r.Unfulfilled[0] != (analytics.Count{Key: "SING", Count: 2}) {
		t.Errorf("unfulfilled: %+v", r.Unfulfilled)
	}
	if r2, _ := analytics.Build(ctx, st, nil, analytics.Options{}); r2.RunsAvailable || r2.Fulfilments.Total != 0 {
		t.Errorf("without runs: %+v", r2)
	}
}
