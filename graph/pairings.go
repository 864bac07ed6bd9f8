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
// within a short window) at At, by Caller (a user id) in Session (the
// session or plan they were used in, as the caller's events record it).
// Both are required: a pair counts at most once per caller's session, and
// only the distinct callers behind a pair make it shown (PairQuorum).
type PairEvidence struct {
	A, B    string
	At      time.Time
	Caller  string
	Session string
}

// PairQuorum is how many distinct callers must have used two tools
// together before LearnedPairs shows the pairing: one caller's sessions
// alone cannot put a pairing into everyone's related tools, manifests and
// ranking.
const PairQuorum = 2

// Pairings stores learned pairings: weighted, undirected edges between tools
// used together, beside the PAIRS_WITH edges manifests declare. It is part of
// Store.
type Pairings interface {
	// LearnPairs strengthens each pair's edge by one, after decaying its
	// weight to the evidence's time (PairHalfLife), once per caller's
	// session: evidence of a pair its caller's session has already given
	// (in this batch or before) changes nothing. The store keeps how many
	// distinct callers gave evidence of each pair. A pair of a tool with
	// itself, or with an empty id, and evidence without a caller or a
	// session are fault.ErrInvalid; the whole batch is written or none of
	// it.
	LearnPairs(ctx context.Context, evidence []PairEvidence) error
	// LearnedPairs returns the tools learned to pair with id that f allows
	// and that at least PairQuorum distinct callers paired with it,
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
	if e.Caller == "" || e.Session == "" {
		return "", "", fmt.Errorf("pair %q–%q: a caller and a session are required (caller %q, session %q): %w", e.A, e.B, e.Caller, e.Session, fault.ErrInvalid)
	}
	if e.A > e.B {
		return e.B, e.A, nil
	}
	return e.A, e.B, nil
}
