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

// testPairings: learned pairings are undirected, count once per caller's
// session, are shown only once graph.PairQuorum distinct callers gave
// evidence of them, decay with graph.PairHalfLife, follow the filter, skip
// unregistered partners, and a bad batch (a tool with itself, evidence
// without a caller or a session) writes nothing.
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
	ev := func(a, b string, at time.Time, caller, session string) graph.PairEvidence {
		return graph.PairEvidence{A: a, B: b, At: at, Caller: caller, Session: session}
	}
	for name, bad := range map[string]graph.PairEvidence{
		"a tool with itself":       ev("trip.flight", "trip.flight", t0, "ana", "ana/s1"),
		"evidence without caller":  ev("trip.flight", "fx.convert", t0, "", "s1"),
		"evidence without session": ev("trip.flight", "fx.convert", t0, "ana", ""),
	} {
		if err := ps.LearnPairs(ctx, []graph.PairEvidence{ev("trip.flight", "trip.hotel", t0, "ana", "ana/s1"), bad}); !errors.Is(err, fault.ErrInvalid) {
			t.Fatalf("%s: %v, want fault.ErrInvalid", name, err)
		}
	}
	learn := func(evidence ...graph.PairEvidence) {
		t.Helper()
		if err := ps.LearnPairs(ctx, evidence); err != nil {
			t.Fatal(err)
		}
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
	// ana's first session pairs flight with hotel (twice: it counts once)
	// and with fx; her second session pairs flight and hotel again (a new
	// session counts). Evidence about an unregistered tool is no edge.
	learn(ev("trip.hotel", "trip.flight", t0, "ana", "ana/s1"), ev("trip.flight", "trip.hotel", t0, "ana", "ana/s1"),
		ev("trip.flight", "fx.convert", t0, "ana", "ana/s1"), ev("trip.flight", "ghost.tool", t0, "ana", "ana/s1"))
	learn(ev("trip.flight", "trip.hotel", t0, "ana", "ana/s1"))
	learn(ev("trip.flight", "trip.hotel", t0, "ana", "ana/s2"))
	// One caller alone, however many sessions, shows nothing to anyone.
	want(pairs("trip.flight", graph.Filter{}, t0), nil, nil)
	want(pairs("trip.hotel", graph.Filter{}, t0), nil, nil)
	// bob's session is a second caller's evidence: flight–hotel is shown
	// (ana's two sessions and bob's, weight 3); flight–fx still only ana's.
	learn(ev("trip.hotel", "trip.flight", t0, "bob", "bob/s1"))
	want(pairs("trip.flight", graph.Filter{}, t0), []string{"trip.hotel"}, []float64{3})
	learn(ev("fx.convert", "trip.flight", t0, "carol", "carol/s1"))
	want(pairs("trip.flight", graph.Filter{}, t0), []string{"trip.hotel", "fx.convert"}, []float64{3, 2})
	want(pairs("trip.hotel", graph.Filter{}, t0), []string{"trip.flight"}, []float64{3})
	want(pairs("trip.flight", graph.Filter{Categories: []string{"travel"}}, t0), []string{"trip.hotel"}, []float64{3})
	// One half-life later the evidence weighs half; new evidence adds one.
	later := t0.Add(graph.PairHalfLife)
	want(pairs("trip.flight", graph.Filter{}, later), []string{"trip.hotel", "fx.convert"}, []float64{1.5, 1})
	learn(ev("fx.convert", "trip.flight", later, "dave", "dave/s1"))
	want(pairs("trip.flight", graph.Filter{}, later), []string{"fx.convert", "trip.hotel"}, []float64{2, 1.5})
	if hits, err := ps.LearnedPairs(ctx, "trip.flight", 1, graph.Filter{}, later); err != nil || len(hits) != 1 {
		t.Fatalf("limit 1: %+v %v", hits, err)
	}
}
