package graphtest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

func gapsOf(t *testing.T, s graph.Store) graph.Gaps {
	t.Helper()
	var g graph.Gaps = s
	return g
}

// testGaps: a verb's unfulfilled runs count on one gap, the latest
// description and closest tools win, entities accumulate; listings rank by
// count and filter by status; a registration closes the open gap (and a
// later miss reopens it).
func testGaps(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	gs := gapsOf(t, s)
	ctx := context.Background()
	t0 := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	if _, err := gs.RecordGap(ctx, graph.GapEvent{Verb: "  "}); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("empty verb: %v", err)
	}
	if _, err := gs.ListGaps(ctx, graph.GapQuery{Status: "maybe"}); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("bad status: %v", err)
	}
	g, err := gs.RecordGap(ctx, graph.GapEvent{Verb: "COMPOSE_SYMPHONY", Description: "write a symphony",
		Closest: []graph.GapCandidate{{ToolID: "text.stats", Score: 0.21}}, Entities: []string{"Orchestra"}, At: t0})
	if err != nil {
		t.Fatal(err)
	}
	if g.Count != 1 || g.Status != graph.GapOpen || !g.FirstSeen.Equal(t0) || !g.LastSeen.Equal(t0) {
		t.Fatalf("first record: %+v", g)
	}
	g, err = gs.RecordGap(ctx, graph.GapEvent{Verb: "COMPOSE_SYMPHONY", Closest: []graph.GapCandidate{{ToolID: "units.convert", Score: 0.3}},
		Entities: []string{"orchestra", "Vienna"}, At: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	want := graph.Gap{Verb: "COMPOSE_SYMPHONY", Description: "write a symphony", Count: 2, FirstSeen: t0, LastSeen: t0.Add(time.Hour),
		Closest: []graph.GapCandidate{{ToolID: "units.convert", Score: 0.3}}, Entities: []string{"Orchestra", "Vienna"}, Status: graph.GapOpen}
	if !reflect.DeepEqual(g, want) {
		t.Fatalf("merged gap:\n got %+v\nwant %+v", g, want)
	}
	for i := 0; i < 3; i++ {
		if _, err := gs.RecordGap(ctx, graph.GapEvent{Verb: "FLY_TO_MARS", At: t0.Add(time.Duration(i) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := gs.RecordGap(ctx, graph.GapEvent{Verb: "SING", At: t0}); err != nil {
		t.Fatal(err)
	}
	list, err := gs.ListGaps(ctx, graph.GapQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if verbs(list) != "FLY_TO_MARS,COMPOSE_SYMPHONY,SING" || !reflect.DeepEqual(list[1], want) {
		t.Fatalf("list: %s %+v", verbs(list), list)
	}
	if list, _ := gs.ListGaps(ctx, graph.GapQuery{Limit: 1}); verbs(list) != "FLY_TO_MARS" {
		t.Fatalf("limit 1: %s", verbs(list))
	}

	// A note sets the reason without counting a run; a note needs a gap.
	noted, err := gs.RecordGap(ctx, graph.GapEvent{Verb: "SING", Reason: "build needs a model", NoteOnly: true, At: t0.Add(time.Hour)})
	if err != nil || noted.Count != 1 || noted.Reason != "build needs a model" || !noted.LastSeen.Equal(t0) || noted.Status != graph.GapOpen {
		t.Fatalf("note: %+v %v", noted, err)
	}
	if list, _ := gs.ListGaps(ctx, graph.GapQuery{}); len(list) != 3 || list[2].Reason != "build needs a model" || list[2].Count != 1 {
		t.Fatalf("noted gap as listed: %+v", list)
	}
	if _, err := gs.RecordGap(ctx, graph.GapEvent{Verb: "NEVER_ASKED", Reason: "no gap", NoteOnly: true}); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("note without a gap: %v", err)
	}

	// A tool registered for the verb closes its gap, once; the reason it
	// was open goes with it.
	if _, err := gs.RecordGap(ctx, graph.GapEvent{Verb: "COMPOSE_SYMPHONY", Reason: "no program passed in 3 rounds", NoteOnly: true}); err != nil {
		t.Fatal(err)
	}
	put(t, s, mk("music.compose", "COMPOSE_SYMPHONY", "Composer", "music", "Compose music.", unit(1)))
	closed, err := gs.CloseGap(ctx, "COMPOSE_SYMPHONY", "music.compose", t0.Add(2*time.Hour))
	if err != nil || !closed {
		t.Fatalf("close: %v %v", closed, err)
	}
	if again, err := gs.CloseGap(ctx, "COMPOSE_SYMPHONY", "music.compose", t0.Add(3*time.Hour)); err != nil || again {
		t.Fatalf("close again: %v %v", again, err)
	}
	if none, err := gs.CloseGap(ctx, "NEVER_ASKED", "music.compose", t0); err != nil || none {
		t.Fatalf("close unknown: %v %v", none, err)
	}
	open1, _ := gs.ListGaps(ctx, graph.GapQuery{Status: graph.GapOpen})
	shut, _ := gs.ListGaps(ctx, graph.GapQuery{Status: graph.GapClosed})
	if verbs(open1) != "FLY_TO_MARS,SING" || len(shut) != 1 || shut[0].ClosedBy != "music.compose" || !shut[0].ClosedAt.Equal(t0.Add(2*time.Hour)) || shut[0].Count != 2 || shut[0].Reason != "" {
		t.Fatalf("after close: open %s closed %+v", verbs(open1), shut)
	}
	// Missing again reopens it.
	g, err = gs.RecordGap(ctx, graph.GapEvent{Verb: "COMPOSE_SYMPHONY", At: t0.Add(4 * time.Hour)})
	if err != nil || g.Status != graph.GapOpen || g.ClosedBy != "" || !g.ClosedAt.IsZero() || g.Count != 3 {
		t.Fatalf("reopened: %+v %v", g, err)
	}
}

func verbs(gs []graph.Gap) string {
	s := ""
	for i, g := range gs {
		if i > 0 {
			s += ","
		}
		s += g.Verb
	}
	return s
}
