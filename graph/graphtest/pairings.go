package graphtest

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// testPairings: learned pairings are undirected, strengthen with each use
// together, decay with graph.PairHalfLife, follow the filter, skip
// unregistered partners, and a bad batch writes nothing.
func testPairings(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	var ps graph.Pairings = s
	ctx := context.Background()
	put(t, s,
		mk("trip.flight", "BOOK_FLIGHT", "Flights", "travel", "Book a flight.", unit(0)),
		mk("trip.hotel", "BOOK_HOTEL", "Hotels", "travel", "Book a hotel.", unit(1)),
		mk("fx.convert", "CONVERT_CURRENCY", "FX", "finance", "Convert money.", unit(2)),
	)
	t0 := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	if err := ps.LearnPairs(ctx, []graph.PairEvidence{{A: "trip.flight", B: "trip.hotel", At: t0}, {A: "trip.flight", B: "trip.flight", At: t0}}); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("a tool paired with itself: %v", err)
	}
	if hits, err := ps.LearnedPairs(ctx, "trip.flight", 10, graph.Filter{}, t0); err != nil || len(hits) != 0 {
		t.Fatalf("a refused batch wrote: %+v %v", hits, err)
	}
	err := ps.LearnPairs(ctx, []graph.PairEvidence{
		{A: "trip.hotel", B: "trip.flight", At: t0}, {A: "trip.flight", B: "trip.hotel", At: t0},
		{A: "trip.flight", B: "fx.convert", At: t0}, {A: "trip.flight", B: "ghost.tool", At: t0},
	})
	if err != nil {
		t.Fatal(err)
	}
	pairs := func(id string, f graph.Filter, asOf time.Time) []graph.Hit {
		t.Helper()
		hits, err := ps.LearnedPairs(ctx, id, 10, f, asOf)
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	want := func(got []graph.Hit, ids []string, scores []float64) {
		t.Helper()
		if len(got) != len(ids) {
			t.Fatalf("pairs %+v, want %v", got, ids)
		}
		for i := range ids {
			if got[i].Tool.ID != ids[i] || math.Abs(got[i].Score-scores[i]) > 1e-9 {
				t.Fatalf("pairs %+v, want %v %v", got, ids, scores)
			}
		}
	}
	want(pairs("trip.flight", graph.Filter{}, t0), []string{"trip.hotel", "fx.convert"}, []float64{2, 1})
	want(pairs("trip.hotel", graph.Filter{}, t0), []string{"trip.flight"}, []float64{2})
	want(pairs("trip.flight", graph.Filter{Categories: []string{"travel"}}, t0), []string{"trip.hotel"}, []float64{2})
	// One half-life later the evidence weighs half; new evidence adds one.
	later := t0.Add(graph.PairHalfLife)
	want(pairs("trip.flight", graph.Filter{}, later), []string{"trip.hotel", "fx.convert"}, []float64{1, 0.5})
	if err := ps.LearnPairs(ctx, []graph.PairEvidence{{A: "fx.convert", B: "trip.flight", At: later}}); err != nil {
		t.Fatal(err)
	}
	want(pairs("trip.flight", graph.Filter{}, later), []string{"fx.convert", "trip.hotel"}, []float64{1.5, 1})
	if hits, err := ps.LearnedPairs(ctx, "trip.flight", 1, graph.Filter{}, later); err != nil || len(hits) != 1 {
		t.Fatalf("limit 1: %+v %v", hits, err)
	}
}
