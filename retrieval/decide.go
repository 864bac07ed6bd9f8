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
}

// Substitute decides on the candidates' similarities, in ranking order
// (the first is the one that would run).
func (r SubstituteRule) Substitute(similarities []float64) bool {
	if len(similarities) == 0 || similarities[0] < r.Threshold {
		return false
	}
	if r.Margin > 0 {
		for _, s := range similarities[1:] {
			if similarities[0]-s < r.Margin {
				return false
			}
		}
	}
	return true
}
