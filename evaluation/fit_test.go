package evaluation

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/toolsmith/toolsmith/retrieval"
)

// fitLogistic is a maximum-likelihood fit: on samples drawn from a known
// model it finds coefficients at least as likely as the model's own (the
// features are collinear, so the coefficients themselves are not unique),
// and far likelier than knowing nothing.
func TestFitLogistic(t *testing.T) {
	truth := retrieval.DecisionModel{Bias: -4, Weights: [retrieval.DecisionFeatures]float64{3, 0.8, 0.3, 0.5, 0.2, 0.3, 0.4}}
	rng := rand.New(rand.NewPCG(1, 2))
	var data []decisionSample
	for range 4000 {
		n := 2 + rng.IntN(8)
		cands := make([]retrieval.Candidate, n)
		for i := range cands {
			cands[i] = retrieval.Candidate{Similarity: 0.2 + 0.7*rng.Float64(), Keyword: rng.NormFloat64(), Subword: rng.NormFloat64()}
		}
		score := 0.0
		for i := n - 1; i >= 0; i-- { // ranked: scores fall
			score += rng.ExpFloat64()
			cands[i].Score = score
		}
		data = append(data, decisionSample{Candidates: cands, Right: rng.Float64() < truth.Confidence(cands)})
	}
	ll := func(m retrieval.DecisionModel) float64 {
		s := 0.0
		for _, d := range data {
			p := m.Confidence(d.Candidates)
			if d.Right {
				s += math.Log(p)
			} else {
				s += math.Log(1 - p)
			}
		}
		return s
	}
	fit := fitLogistic(data)
	if got, want := ll(fit), ll(truth); got < want {
		t.Fatalf("fitted log-likelihood %.2f < the true model's %.2f (fit %+v)", got, want, fit)
	}
	if got, none := ll(fit), ll(retrieval.DecisionModel{}); got-none < 0.1*math.Abs(none) {
		t.Fatalf("fitted log-likelihood %.2f, hardly above knowing nothing's %.2f", got, none)
	}
}

// Searches with usage evidence fit the model's evidence part, the others
// its zero-shot part: each part learns its own regime.
func TestFitLogisticRegimes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var data []decisionSample
	for k := range 4000 {
		used := k%2 == 0
		cands := make([]retrieval.Candidate, retrieval.FulfilmentCandidates)
		score := 0.0
		for i := len(cands) - 1; i >= 0; i-- {
			score += rng.ExpFloat64()
			cands[i] = retrieval.Candidate{Similarity: 0.2 + 0.7*rng.Float64(), Score: score}
			if used {
				cands[i].Learned = 0.5
			}
		}
		// Zero-shot the first is right when it is close; with usage
		// evidence, a coin toss whatever its similarity.
		right := rng.Float64() < 0.5
		if !used {
			right = rng.Float64() < cands[0].Similarity*cands[0].Similarity
		}
		data = append(data, decisionSample{Candidates: cands, Right: right})
	}
	m := fitLogistic(data)
	if m.Weights[0] < 1 {
		t.Errorf("zero-shot similarity weight %v, want a clear positive weight", m.Weights[0])
	}
	if w := m.EvidenceWeights[0]; math.Abs(w) > 0.5 {
		t.Errorf("evidence part's similarity weight %v, want near 0", w)
	}
	if m.EvidenceShift != 0 {
		t.Errorf("fitted shift %v, want 0 (chosen, not fitted)", m.EvidenceShift)
	}
}

// fitRecordWeight recovers the record's weight from searches drawn from a
// model that reads it, with every other weight held at the base model's,
// and finds none where the record says nothing.
func TestFitRecordWeight(t *testing.T) {
	base := retrieval.DefaultDecisionModel
	base.EvidenceWeights[retrieval.DecisionEvidenceFeatures-2], base.EvidenceWeights[retrieval.DecisionEvidenceFeatures-1] = 0, 0
	base.EvidenceShift = 0
	truth := base
	truth.EvidenceWeights[retrieval.DecisionEvidenceFeatures-2] = 0.8
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func(m retrieval.DecisionModel) []decisionSample {
		var data []decisionSample
		for range 6000 {
			cands := make([]retrieval.Candidate, retrieval.FulfilmentCandidates)
			score := 0.0
			for i := len(cands) - 1; i >= 0; i-- {
				score += rng.ExpFloat64()
				cands[i] = retrieval.Candidate{Similarity: 0.3 + 0.5*rng.Float64(), Score: score, Learned: rng.Float64() * score / 2}
			}
			cands[0].Record, cands[0].Recorded = -3*rng.Float64(), true
			data = append(data, decisionSample{Candidates: cands, Right: rng.Float64() < m.Confidence(cands)})
		}
		return data
	}
	if w := fitRecordWeight(draw(truth), base); math.Abs(w-0.8) > 0.15 {
		t.Fatalf("record weight %v, want about 0.8", w)
	}
	if w := fitRecordWeight(draw(base), base); math.Abs(w) > 0.15 {
		t.Fatalf("record weight %v where the record says nothing, want about 0", w)
	}
	if w := fitRecordWeight(nil, base); w != 0 {
		t.Fatalf("no samples: %v", w)
	}
}
