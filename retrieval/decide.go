package retrieval

import "fmt"

// FulfilmentCandidates is how many candidates a novel verb's search returns.
const FulfilmentCandidates = 10

// The fulfilment rule calibrated for the built-in USE-Lite embedder and
// DefaultWeights, on the ranking of FulfilmentQuery (the query as a whole)
// (evaluation/TUNING.md, "The decision"; workflows/CALIBRATION.md):
// a match substitutes when its description is close (cosine ≥ .67) and its
// hybrid score leads the second candidate's by 4.25, or when its score leads
// by 22 whatever its similarity, a lead that only usage evidence opens. On
// the dev split it reaches substitution precision ≥ .95 zero-shot and with
// history, on both halves. Other weights or another embedder move these
// scales: recalibrate with `toolsmith eval --protocol leave-one-out
// --calibrate`.
const (
	DefaultSubstituteThreshold      = 0.67
	DefaultSubstituteScoreMargin    = 4.25
	DefaultSubstituteEvidenceMargin = 22
)

// DefaultSubstituteRule is the calibrated rule as one value.
func DefaultSubstituteRule() SubstituteRule {
	return SubstituteRule{Threshold: DefaultSubstituteThreshold, ScoreMargin: DefaultSubstituteScoreMargin,
		EvidenceMargin: DefaultSubstituteEvidenceMargin}
}

// SubstituteRule is the fulfilment decision a novel verb lives on: is the
// best candidate of a search a confident enough match to run in the verb's
// place, or does nothing fit (decompose, onboard or record a gap)?
// NovelVerbWorkflow decides with it, and `toolsmith eval --protocol
// leave-one-out` measures it, so the number measured is the behaviour
// shipped.
//
// The first candidate substitutes when it is a close match (Threshold,
// Margin and ScoreMargin all hold) or when its score lead reaches
// EvidenceMargin. A zero margin is off.
type SubstituteRule struct {
	// Threshold is the cosine similarity (the semantic signal's raw value)
	// the first candidate needs.
	Threshold float64 `json:"threshold"`
	// Margin, when > 0, is how far the first candidate's similarity must
	// stand above every other candidate's: a near tie between two tools is
	// not a confident match.
	Margin float64 `json:"margin,omitempty"`
	// ScoreMargin, when > 0, is how far the first candidate's hybrid score
	// (every signal, usage evidence included) must stand above the
	// second's.
	ScoreMargin float64 `json:"scoreMargin,omitempty"`
	// EvidenceMargin, when > 0, is a lead of the first candidate's hybrid
	// score over the second's that substitutes on its own, below
	// Threshold: with DefaultWeights only the usage signals (past queries
	// like this one that the tool served, their neighbours, the query log)
	// open a lead this wide, and it is the strongest evidence of a right
	// match there is.
	EvidenceMargin float64 `json:"evidenceMargin,omitempty"`
}

// IsZero reports whether no field is set (the caller asked for no rule of
// its own, so the calibrated default applies).
func (r SubstituteRule) IsZero() bool { return r == SubstituteRule{} }

// Or completes r from def: a rule is set as a whole, so a zero r is def,
// and an r without a threshold takes def's (its unset margins stay off).
func (r SubstituteRule) Or(def SubstituteRule) SubstituteRule {
	switch {
	case r.IsZero():
		return def
	case r.Threshold == 0:
		r.Threshold = def.Threshold
	}
	return r
}

// Candidate is what the rule reads of a search hit.
type Candidate struct {
	Similarity float64 // the semantic signal's raw cosine
	Score      float64 // the hybrid ranking score
}

// Candidate is what the rule reads of a ranked hit: its raw cosine and its
// hybrid score. The workflow's searcher (activities.RetrievalSearcher) and
// the leave-one-out evaluation both read hits through it.
func (h Hit) Candidate() Candidate {
	return Candidate{Similarity: h.Breakdown.Semantic.Raw, Score: h.Score}
}

// Substitute decides on the candidates, in ranking order (the first is the
// one that would run).
func (r SubstituteRule) Substitute(cands []Candidate) bool { return r.verdict(cands).ok }

// Decide is Substitute with the reason, for the workflow's record: which
// clause held, or which bar the first candidate missed.
func (r SubstituteRule) Decide(cands []Candidate) (bool, string) {
	v := r.verdict(cands)
	var why string
	switch v.kind {
	case noCandidates:
		why = "no candidates"
	case byEvidence:
		why = fmt.Sprintf("score lead %.2f ≥ evidence margin %.2f", v.lead, r.EvidenceMargin)
	case belowThreshold:
		why = fmt.Sprintf("similarity %.3f < threshold %.3f", cands[0].Similarity, r.Threshold)
	case nearSimilarity:
		why = fmt.Sprintf("similarity %.3f leads another candidate by %.3f < margin %.3f", cands[0].Similarity, v.gap, r.Margin)
	case nearScore:
		why = fmt.Sprintf("similarity %.3f ≥ %.3f but score lead %.2f < score margin %.2f", cands[0].Similarity, r.Threshold, v.lead, r.ScoreMargin)
	default:
		why = fmt.Sprintf("similarity %.3f ≥ threshold %.3f", cands[0].Similarity, r.Threshold)
		if r.ScoreMargin > 0 && len(cands) > 1 {
			why += fmt.Sprintf(", score lead %.2f ≥ %.2f", v.lead, r.ScoreMargin)
		}
	}
	return v.ok, why
}

// The outcomes of a decision.
const (
	closeMatch = iota
	noCandidates
	byEvidence
	belowThreshold
	nearSimilarity
	nearScore
)

type verdict struct {
	ok        bool
	kind      int
	lead, gap float64 // score lead over the second; smallest similarity gap
}

// verdict is the decision without formatting (the eval's calibration
// applies it to every query under thousands of rules).
func (r SubstituteRule) verdict(cands []Candidate) verdict {
	if len(cands) == 0 {
		return verdict{kind: noCandidates}
	}
	first := cands[0]
	lead, hasLead := 0.0, len(cands) > 1
	if hasLead {
		lead = first.Score - cands[1].Score
		if r.EvidenceMargin > 0 && lead >= r.EvidenceMargin {
			return verdict{ok: true, kind: byEvidence, lead: lead}
		}
	}
	if first.Similarity < r.Threshold {
		return verdict{kind: belowThreshold, lead: lead}
	}
	if r.Margin > 0 {
		for _, c := range cands[1:] {
			if d := first.Similarity - c.Similarity; d < r.Margin {
				return verdict{kind: nearSimilarity, lead: lead, gap: d}
			}
		}
	}
	if r.ScoreMargin > 0 && hasLead && lead < r.ScoreMargin {
		return verdict{kind: nearScore, lead: lead}
	}
	return verdict{ok: true, kind: closeMatch, lead: lead}
}
