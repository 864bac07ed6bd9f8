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
