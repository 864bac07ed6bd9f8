package retrain

import (
	"fmt"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// Defaults of the gate (see docs/retraining.md for why).
const (
	// DefaultMargin is how much the candidate's MRR must beat the current
	// model's on the held-out replay (absolute).
	DefaultMargin = 0.01
	// DefaultMinHeldOut is the fewest held-out queries a decision to
	// promote may rest on.
	DefaultMinHeldOut = 20
	// DefaultMinTools is the fewest distinct tools the held-out queries
	// must have been served by: a replay of one or two tools' uses (a
	// burst of one kind of traffic, or one caller reporting uses of a tool
	// to pull it into other searches) says nothing of the ranking as a
	// whole.
	DefaultMinTools = 3
)

// Gate is the promotion rule: a candidate is promoted only when the
// replay had at least MinHeldOut queries served by at least MinTools
// distinct tools (and, after an operator rolled back from a version, at
// least MinHeldOut of them served after everything that version had
// seen: a rollback holds until new use speaks for a change), its MRR beats the current
// model's by at least Margin, neither its R@1 nor its R@5 is lower, and
// the fulfilment decision with its search and its record runs a wrong
// tool for no more of the held-out queries than with the current model's,
// give or take Margin, and the catalogue's own texts (its tools' use cases
// and short descriptions as queries) rank no worse than with the current
// model, R@1 and R@5 each give or take Margin: the newest uses, which a
// few callers can supply, cannot speak for the rest of the catalogue.
// Anything else keeps the current model: learning must never hurt.
type Gate struct {
	Margin     float64 `json:"margin"`
	MinHeldOut int     `json:"minHeldOut"`
	MinTools   int     `json:"minTools"`
}

// WithDefaults fills zero fields with the defaults.
func (g Gate) WithDefaults() Gate {
	if g.Margin <= 0 {
		g.Margin = DefaultMargin
	}
	if g.MinHeldOut <= 0 {
		g.MinHeldOut = DefaultMinHeldOut
	}
	if g.MinTools <= 0 {
		g.MinTools = DefaultMinTools
	}
	return g
}

// Decide says whether the candidate is promoted over the current model
// and why. It is pure (the workflow calls it).
func (g Gate) Decide(current, candidate Figures) (bool, string) {
	g = g.WithDefaults()
	switch {
	case candidate.N < g.MinHeldOut:
		return false, fmt.Sprintf("not enough held-out queries: %d, the gate needs %d; the current model stays", candidate.N, g.MinHeldOut)
	case candidate.Tools < g.MinTools:
		return false, fmt.Sprintf("the held-out queries were served by %d tools, the gate needs %d; the current model stays", candidate.Tools, g.MinTools)
	case candidate.Fresh < g.MinHeldOut:
		return false, fmt.Sprintf("an operator rolled back from a version that saw these uses: %d held-out queries are newer, the gate needs %d; the current model stays", candidate.Fresh, g.MinHeldOut)
	case candidate.MRR < current.MRR+g.Margin:
		return false, fmt.Sprintf("no better by the margin: MRR %.4f vs current %.4f (needs +%.4f); the current model stays", candidate.MRR, current.MRR, g.Margin)
	case candidate.R1 < current.R1 || candidate.R5 < current.R5:
		return false, fmt.Sprintf("MRR %.4f beats %.4f but R@1 %.3f/R@5 %.3f fall below the current %.3f/%.3f; the current model stays",
			candidate.MRR, current.MRR, candidate.R1, candidate.R5, current.R1, current.R5)
	case candidate.Catalogue != nil && current.Catalogue != nil &&
		(candidate.Catalogue.R1 < current.Catalogue.R1-g.Margin || candidate.Catalogue.R5 < current.Catalogue.R5-g.Margin):
		return false, fmt.Sprintf("MRR %.4f beats %.4f on the newest uses, but the catalogue's own texts rank worse: R@1 %.3f/R@5 %.3f against the current %.3f/%.3f (margin %.4f); the current model stays",
			candidate.MRR, current.MRR, candidate.Catalogue.R1, candidate.Catalogue.R5, current.Catalogue.R1, current.Catalogue.R5, g.Margin)
	case candidate.Wrong > current.Wrong+g.Margin:
		return false, fmt.Sprintf("MRR %.4f beats %.4f but the decision would run a wrong tool for %.3f of the held-out queries against the current %.3f (margin %.4f); the current model stays",
			candidate.MRR, current.MRR, candidate.Wrong, current.Wrong, g.Margin)
	}
	return true, fmt.Sprintf("better: MRR %.4f vs current %.4f (margin %.4f), R@1 %.3f vs %.3f, R@5 %.3f vs %.3f on %d held-out queries",
		candidate.MRR, current.MRR, g.Margin, candidate.R1, current.R1, candidate.R5, current.R5, candidate.N)
}

// Validate checks a gate given by an operator; zero fields are defaults.
func (g Gate) Validate() error {
	if g.Margin < 0 || g.Margin > 1 {
		return fault.Invalid("gate.margin", "must be between 0 and 1 (0 takes %.2f), got %g", DefaultMargin, g.Margin)
	}
	if g.MinHeldOut < 0 || g.MinHeldOut > 1_000_000 {
		return fault.Invalid("gate.minHeldOut", "must be between 0 and 1000000 (0 takes %d), got %d", DefaultMinHeldOut, g.MinHeldOut)
	}
	if g.MinTools < 0 || g.MinTools > 1_000_000 {
		return fault.Invalid("gate.minTools", "must be between 0 and 1000000 (0 takes %d), got %d", DefaultMinTools, g.MinTools)
	}
	return nil
}
