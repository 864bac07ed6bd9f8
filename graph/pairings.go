package graph

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// PairHalfLife is how fast the evidence of a learned pairing fades: a pair
// last used together one half-life ago weighs half as much.
const PairHalfLife = 30 * 24 * time.Hour

// PairEvidence says two tools were used together (in one session or plan,
// within a short window) at At.
type PairEvidence struct {
	A, B string
	At   time.Time
}

// Pairings stores learned pairings: weighted, undirected edges between tools
// used together, beside the PAIRS_WITH edges manifests declare. It is part of
// Store.
type Pairings interface {
	// LearnPairs strengthens each pair's edge by one, after decaying its
	// weight to the evidence's time (PairHalfLife). A pair of a tool with
	// itself, or with an empty id, is fault.ErrInvalid; the whole batch is
	// written or none of it.
	LearnPairs(ctx context.Context, evidence []PairEvidence) error
	// LearnedPairs returns the tools learned to pair with id that f allows,
	// strongest first, with their weight decayed to asOf as Score; at most
	// limit (default 10). Unregistered partners are left out.
	LearnedPairs(ctx context.Context, id string, limit int, f Filter, asOf time.Time) ([]Hit, error)
}

// DecayPair is a learned pair's weight w, last updated at, seen at t.
func DecayPair(w float64, at, t time.Time) float64 {
	if d := t.Sub(at); d > 0 {
		return w * math.Exp2(-float64(d)/float64(PairHalfLife))
	}
	return w
}

// OrderPair returns a pair's ids in the order stores key it by, or
// fault.ErrInvalid.
func OrderPair(e PairEvidence) (string, string, error) {
	if e.A == "" || e.B == "" || e.A == e.B {
		return "", "", fmt.Errorf("pair %q–%q: two different tool ids are required: %w", e.A, e.B, fault.ErrInvalid)
	}
	if e.A > e.B {
		return e.B, e.A, nil
	}
	return e.A, e.B, nil
}
