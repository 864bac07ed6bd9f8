package graph_test

import (
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
)

// A gap's closest tools are kept closest first (ties by id), whatever order
// the run listed them in, and at most MaxGapClosest of them: the closest.
func TestMergeGapSortsClosest(t *testing.T) {
	e := graph.GapEvent{Verb: "ORDER_PIZZA", At: time.Now(), Closest: []graph.GapCandidate{
		{ToolID: "restaurant.search", Score: 0.31}, {ToolID: "restaurant.reserve_table", Score: 0.42},
		{ToolID: "currency.convert", Score: 0.12}, {ToolID: "restaurant.get_menu", Score: 0.42},
		{ToolID: "text.stats", Score: 0.05}, {ToolID: "units.convert", Score: 0.2}}}
	g, err := graph.MergeGap(graph.Gap{}, e)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"restaurant.get_menu", "restaurant.reserve_table", "restaurant.search", "units.convert", "currency.convert"}
	if len(g.Closest) != len(want) {
		t.Fatalf("closest %+v, want %v", g.Closest, want)
	}
	for i, c := range g.Closest {
		if c.ToolID != want[i] {
			t.Fatalf("closest %+v, want %v", g.Closest, want)
		}
	}
	if e.Closest[0].ToolID != "restaurant.search" {
		t.Fatal("MergeGap reordered the event's own list")
	}
}
