package graphtest

import (
	"context"
	"slices"
	"testing"

	"github.com/toolsmith/toolsmith/graph"
)

// RunFollow runs the contract of graph.Follower: two instances of one
// store (two processes' views of one SQLite file or one Neo4j database).
// pair must return two fresh instances over the same fresh, empty store
// and arrange their cleanup. It is separate from Run because a store's
// suite opens one instance per test.
func RunFollow(t *testing.T, pair func(t *testing.T) (a, b graph.Store)) {
	ctx := context.Background()
	a, b := pair(t)
	for _, s := range []graph.Store{a, b} {
		if err := s.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: Model, Dimension: Dim}); err != nil {
			t.Fatalf("EnsureEmbedder: %v", err)
		}
	}
	refresh := func(s graph.Store, what string) []string {
		t.Helper()
		ids, err := s.Refresh(ctx)
		if err != nil {
			t.Fatalf("Refresh after %s: %v", what, err)
		}
		slices.Sort(ids)
		return ids
	}
	// A first Refresh starts following (the Neo4j store reads nothing yet).
	refresh(a, "open")
	refresh(b, "open")

	put(t, b, mk("fx.convert", "CONVERT_CURRENCY", "Currency converter", "finance", "Convert euros to dollars.", unit(0)),
		mk("wx.now", "GET_WEATHER", "Weather now", "weather", "Current weather in a city.", unit(1)))
	if got := refresh(b, "its own registration"); len(got) != 0 {
		t.Errorf("b.Refresh after b's own writes = %v, want none (applied when they commit)", got)
	}
	if got := refresh(a, "b registered two tools"); !slices.Equal(got, []string{"fx.convert", "wx.now"}) {
		t.Fatalf("a.Refresh after b registered fx.convert and wx.now = %v", got)
	}
	if got := refresh(a, "nothing new"); len(got) != 0 {
		t.Errorf("a second a.Refresh = %v, want none", got)
	}
	hits, err := a.VectorSearch(ctx, unit(0), 1, graph.Filter{})
	if err != nil || len(hits) != 1 || hits[0].Tool.ID != "fx.convert" {
		t.Errorf("a.VectorSearch(e0) after Refresh = %v, %v; want fx.convert", ids(hits), err)
	}
	hits, err = a.TextSearch(ctx, "euros", 5, graph.Filter{})
	if err != nil || !slices.Equal(ids(hits), []string{"fx.convert"}) {
		t.Errorf("a.TextSearch(euros) after Refresh = %v, %v; want fx.convert", ids(hits), err)
	}
	page, err := a.ListTools(ctx, graph.ListQuery{Filter: graph.Filter{IDs: []string{"fx.convert", "wx.now"}}})
	if err != nil || !slices.Equal(summaryIDs(page.Items), []string{"fx.convert", "wx.now"}) {
		t.Errorf("a.ListTools(ids) after Refresh = %v, %v", summaryIDs(page.Items), err)
	}

	// Re-described elsewhere: the new text and vector replace the old here.
	put(t, b, mk("fx.convert", "CONVERT_CURRENCY", "Currency converter", "finance", "Convert yen to pounds.", unit(2)))
	if got := refresh(a, "b re-described fx.convert"); !slices.Equal(got, []string{"fx.convert"}) {
		t.Fatalf("a.Refresh after b re-described fx.convert = %v", got)
	}
	if hits, err := a.TextSearch(ctx, "euros", 5, graph.Filter{}); err != nil || len(hits) != 0 {
		t.Errorf("a.TextSearch(euros) after the re-description = %v, %v; want none", ids(hits), err)
	}
	if hits, err := a.TextSearch(ctx, "yen", 5, graph.Filter{}); err != nil || !slices.Equal(ids(hits), []string{"fx.convert"}) {
		t.Errorf("a.TextSearch(yen) after the re-description = %v, %v; want fx.convert", ids(hits), err)
	}
	if hits, err := a.VectorSearch(ctx, unit(2), 1, graph.Filter{}); err != nil || len(hits) != 1 || hits[0].Tool.ID != "fx.convert" {
		t.Errorf("a.VectorSearch(e2) after the re-description = %v, %v; want fx.convert", ids(hits), err)
	}

	// Retired elsewhere: gone from what a finds among active tools.
	if err := b.SetStatus(ctx, "wx.now", graph.StatusDisabled, "retired"); err != nil {
		t.Fatal(err)
	}
	if got := refresh(a, "b disabled wx.now"); !slices.Equal(got, []string{"wx.now"}) {
		t.Fatalf("a.Refresh after b disabled wx.now = %v", got)
	}
	if hits, err := a.VectorSearch(ctx, unit(1), 5, graph.Filter{}); err != nil || contains(ids(hits), "wx.now") {
		t.Errorf("a.VectorSearch(e1) after wx.now was disabled = %v, %v; want it gone", ids(hits), err)
	}
	if hits, err := a.TextSearch(ctx, "weather", 5, graph.Filter{}); err != nil || contains(ids(hits), "wx.now") {
		t.Errorf("a.TextSearch(weather) after wx.now was disabled = %v, %v; want it gone", ids(hits), err)
	}
	if got := refresh(b, "its own status change"); len(got) != 0 {
		t.Errorf("b.Refresh after b's own status change = %v, want none", got)
	}

	// Usage recorded elsewhere is evidence here too.
	if err := b.RecordUsage(ctx, []graph.UsageEvent{{ToolID: "fx.convert", Query: "yen", QueryEmbedding: unit(3), Success: true}}); err != nil {
		t.Fatal(err)
	}
	refresh(a, "b recorded usage")
	u, err := a.Usage(ctx, []string{"fx.convert"})
	if err != nil || u["fx.convert"].Uses != 1 {
		t.Errorf("a.Usage(fx.convert) after b recorded one use = %+v, %v", u, err)
	}
	if hits, err := a.UsageSearch(ctx, unit(3), 1, graph.Filter{}); err != nil || len(hits) != 1 || hits[0].Tool.ID != "fx.convert" {
		t.Errorf("a.UsageSearch(e3) after b recorded usage = %v, %v; want fx.convert", ids(hits), err)
	}
}
