package retrieval

// The fulfilment defaults: DefaultSubstituteThreshold is calibrated for the
// built-in USE-Lite embedder (workflows/CALIBRATION.md, evaluation/TUNING.md);
// FulfilmentCandidates is how many candidates a novel verb's search returns.
const (
	DefaultSubstituteThreshold = 0.60
	FulfilmentCandidates       = 10
)

// SubstituteRule is the fulfilment decision a novel verb lives on: is the
// best candidate of a search a confident enough match to run in the verb's
// place, or does nothing fit (decompose, onboard or record a gap)?
// NovelVerbWorkflow decides with it, and `toolsmith eval --protocol
// leave-one-out` measures it, so the number measured is the behaviour
// shipped.
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
}

// Candidate is what the rule reads of a search hit.
type Candidate struct {
	Similarity float64 // the semantic signal's raw cosine
	Score      float64 // the hybrid ranking score
}

// Substitute decides on the candidates, in ranking order (the first is the
// one that would run).
func (r SubstituteRule) Substitute(cands []Candidate) bool {
	if len(cands) == 0 || cands[0].Similarity < r.Threshold {
		return false
	}
	for _, c := range cands[1:] {
		if r.Margin > 0 && cands[0].Similarity-c.Similarity < r.Margin {
			return false
		}
	}
	if r.ScoreMargin > 0 && len(cands) > 1 && cands[0].Score-cands[1].Score < r.ScoreMargin {
		return false
	}
	return true
}
